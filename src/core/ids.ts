import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

let lastTime = -1;
let lastRandom: number[] = [];

/**
 * A ULID: 48-bit millisecond time + 80 random bits in Crockford base32, so ids sort by creation time.
 * Monotonic within a process: two ids made in the same millisecond still sort in creation order.
 * A time in the past (an import keeping its original date) gets a fresh id of that time.
 */
export function ulid(timeMs: number = Date.now()): string {
  if (timeMs === lastTime) {
    let i = lastRandom.length - 1;
    while (i >= 0 && lastRandom[i] === 31) {
      lastRandom[i] = 0;
      i--;
    }
    if (i < 0) throw new Error('ulid random component overflow');
    lastRandom[i] = (lastRandom[i] ?? 0) + 1;
  } else {
    lastTime = timeMs;
    const bytes = randomBytes(16);
    lastRandom = Array.from({ length: 16 }, (_, j) => (bytes[j] ?? 0) & 31);
    lastRandom[0] = (lastRandom[0] ?? 0) & 15; // keep headroom so increments never overflow in practice
  }
  let time = '';
  let t = timeMs;
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return time + lastRandom.map((v) => ALPHABET[v]).join('');
}

const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export function isUlid(value: string): boolean {
  return ULID_RE.test(value);
}
