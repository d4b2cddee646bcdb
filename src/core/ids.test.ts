import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isUlid, ulid } from './ids.js';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Milliseconds encoded in the first ten characters of a ULID. */
function timeOf(id: string): number {
  return [...id.slice(0, 10)].reduce((t, c) => t * 32 + ALPHABET.indexOf(c), 0);
}

describe('ulid', () => {
  it('is 26 Crockford base32 characters encoding the given time', () => {
    const t = Date.parse('2026-03-04T05:06:07.089Z');
    const id = ulid(t);
    assert.equal(id.length, 26);
    assert.ok(isUlid(id), id);
    assert.match(id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
    assert.equal(timeOf(id), t);
    assert.equal(timeOf(ulid(0)), 0);
    assert.ok(Math.abs(timeOf(ulid()) - Date.now()) < 5000, 'defaults to now');
  });

  it('ids of later times sort after ids of earlier times', () => {
    const times = [0, 1, 31, 32, 1_000, 1_700_000_000_000, 1_700_000_000_001, 1_800_000_000_000, 2 ** 48 - 1];
    const ids = times.map((t) => ulid(t));
    assert.deepEqual([...ids].sort(), ids);
  });

  it('is monotonic within one millisecond', () => {
    const t = Date.parse('2026-05-05T00:00:00.000Z');
    const ids = Array.from({ length: 5000 }, () => ulid(t));
    assert.equal(new Set(ids).size, ids.length, 'all distinct');
    for (let i = 1; i < ids.length; i++) assert.ok((ids[i - 1] as string) < (ids[i] as string), `${ids[i - 1]} !< ${ids[i]}`);
    assert.ok(ids.every((id) => timeOf(id) === t));
  });

  it('an id for an earlier time (an import keeping its date) sorts before ids already made later', () => {
    const now = Date.parse('2026-05-05T00:00:00.000Z');
    const recent = ulid(now);
    const imported = ulid(now - 30 * 86_400_000);
    assert.ok(imported < recent);
    assert.ok(ulid(now + 1) > recent);
  });

  it('ids made at once are unique', () => {
    const ids = new Set(Array.from({ length: 20_000 }, () => ulid()));
    assert.equal(ids.size, 20_000);
  });
});

describe('isUlid', () => {
  it('accepts ULIDs and rejects other strings', () => {
    assert.ok(isUlid('01ARZ3NDEKTSV4RRFFQ69G5FAV'));
    assert.ok(!isUlid('01ARZ3NDEKTSV4RRFFQ69G5FA'), '25 characters');
    assert.ok(!isUlid('01ARZ3NDEKTSV4RRFFQ69G5FAVX'), '27 characters');
    assert.ok(!isUlid('01ARZ3NDEKTSV4RRFFQ69G5FAI'), 'I is not in the alphabet');
    assert.ok(!isUlid('01ARZ3NDEKTSV4RRFFQ69G5FAU'), 'U is not in the alphabet');
    assert.ok(!isUlid('01arz3ndektsv4rrffq69g5fav'), 'lower case');
    assert.ok(!isUlid(''));
  });
});
