import { CairnError } from '../interfaces/errors.js';

/**
 * Conversation files for `cairn ingest`. Two shapes are read:
 * - LoCoMo samples (one object or a list): `{ sample_id, conversation: { speaker_a, speaker_b, session_<n>: [turns],
 *   session_<n>_date_time: "1:56 pm on 8 May, 2023" } }`, turns `{ speaker, dia_id, text, blip_caption? }`;
 * - a plain transcript: `{ id?, turns: [ { speaker?, text, session?, at? } ] }` (or a list of them).
 */

export interface ConversationTurn {
  session: string;
  turn: number;
  speaker: string | null;
  text: string;
  /** ISO time, when known. */
  at: string | null;
  /** The turn's own id in the source (LoCoMo dia_id). */
  externalId: string | null;
}

export interface Conversation {
  id: string;
  turns: ConversationTurn[];
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** Parses LoCoMo's "1:56 pm on 8 May, 2023" as UTC; null when it does not match. */
export function parseLocomoDate(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const m = /^(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})$/iu.exec(value.trim());
  if (!m) return null;
  const month = MONTHS.indexOf((m[5] as string).toLowerCase());
  if (month < 0) return null;
  let hour = Number(m[1]) % 12;
  if ((m[3] as string).toLowerCase() === 'pm') hour += 12;
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]))).toISOString();
}

/** The text a turn is remembered by: who said it, what, and what they shared. */
export function turnText(speaker: string | null, text: string, caption?: unknown): string {
  const said = speaker ? `${speaker} said, "${text}"` : text;
  return typeof caption === 'string' && caption.trim() ? `${said} and shared ${caption.trim()}` : said;
}

function fromLocomo(sample: Record<string, unknown>, index: number): Conversation {
  const conv = sample['conversation'] as Record<string, unknown>;
  const id = typeof sample['sample_id'] === 'string' ? (sample['sample_id'] as string) : `conversation-${index + 1}`;
  const sessions = Object.keys(conv)
    .map((k) => /^session_(\d+)$/u.exec(k))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  const turns: ConversationTurn[] = [];
  for (const n of sessions) {
    const list = conv[`session_${n}`];
    if (!Array.isArray(list)) continue;
    const base = parseLocomoDate(conv[`session_${n}_date_time`]);
    list.forEach((t: Record<string, unknown>, i) => {
      if (typeof t['text'] !== 'string' || !t['text'].trim()) return;
      const speaker = typeof t['speaker'] === 'string' ? t['speaker'] : null;
      turns.push({
        session: `${id}/session_${n}`,
        turn: i,
        speaker,
        text: turnText(speaker, t['text'] as string, t['blip_caption']),
        // turns keep their order within a session: one second apart from the session's start
        at: base ? new Date(Date.parse(base) + i * 1000).toISOString() : null,
        externalId: typeof t['dia_id'] === 'string' ? (t['dia_id'] as string) : null,
      });
    });
  }
  return { id, turns };
}

function fromPlain(obj: Record<string, unknown>, index: number): Conversation {
  const id = typeof obj['id'] === 'string' ? (obj['id'] as string) : `conversation-${index + 1}`;
  const list = obj['turns'] as unknown[];
  const counters = new Map<string, number>();
  const turns = list.map((raw, i) => {
    if (typeof raw !== 'object' || raw === null) throw new CairnError('INVALID_INPUT', `turns[${i}]: must be an object`, { field: `turns[${i}]` });
    const t = raw as Record<string, unknown>;
    if (typeof t['text'] !== 'string' || !t['text'].trim()) throw new CairnError('INVALID_INPUT', `turns[${i}].text: must be a non-empty string`, { field: `turns[${i}].text` });
    const session = typeof t['session'] === 'string' ? `${id}/${t['session']}` : id;
    const turn = counters.get(session) ?? 0;
    counters.set(session, turn + 1);
    const speaker = typeof t['speaker'] === 'string' ? t['speaker'] : null;
    return { session, turn, speaker, text: turnText(speaker, t['text'] as string), at: typeof t['at'] === 'string' ? (t['at'] as string) : null, externalId: typeof t['id'] === 'string' ? (t['id'] as string) : null };
  });
  return { id, turns };
}

/** Reads one or more conversations from parsed JSON; throws INVALID_INPUT naming what is wrong. */
export function parseConversations(json: unknown): Conversation[] {
  const list = Array.isArray(json) ? json : [json];
  if (list.length === 0) throw new CairnError('INVALID_INPUT', 'the file holds no conversation');
  return list.map((item, i) => {
    if (typeof item !== 'object' || item === null) throw new CairnError('INVALID_INPUT', `conversation ${i + 1}: must be an object`);
    const obj = item as Record<string, unknown>;
    if (typeof obj['conversation'] === 'object' && obj['conversation'] !== null) return fromLocomo(obj, i);
    if (Array.isArray(obj['turns'])) return fromPlain(obj, i);
    throw new CairnError('INVALID_INPUT', `conversation ${i + 1}: expected a LoCoMo sample (with "conversation") or { "turns": [...] }`);
  });
}
