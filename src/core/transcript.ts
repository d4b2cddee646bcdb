/**
 * Reading Claude Code transcript entries (one JSON object per line of the session's JSONL file). The format
 * is internal to Claude Code and changes between versions, so every function here is permissive: a line
 * needs only a string `type`, unknown types and fields are ignored, and anything malformed yields null or
 * an empty list rather than an error. No I/O: the caller streams the file and hands lines in.
 */

/** One transcript line, as far as cairn relies on it. */
export interface TranscriptEntry {
  type: string;
  [key: string]: unknown;
}

/**
 * Parses one line. Returns null for a blank line, invalid JSON (e.g. a last line still being written) or
 * a value that is not an object with a string `type`.
 */
export function parseTranscriptLine(line: string): TranscriptEntry | null {
  const trimmed = line.trim();
  if (trimmed === '' || trimmed[0] !== '{') return null;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  return typeof (value as { type?: unknown }).type === 'string' ? (value as TranscriptEntry) : null;
}

/**
 * Cheap structural test on the raw line, before parsing: true when the line carries a tool result. In
 * compact JSON the key `"toolUseResult":` can only be a key — inside a string its quotes would be escaped —
 * so a line with it is never a human statement and need not be parsed at all. Tool results are most of a
 * transcript's bytes, so this keeps a 100 MB read fast.
 */
export function isToolResultLine(line: string): boolean {
  return line.includes('"toolUseResult":') || line.includes('"type":"tool_result"');
}

function content(entry: TranscriptEntry): unknown {
  const message = entry['message'];
  return typeof message === 'object' && message !== null ? (message as { content?: unknown }).content : undefined;
}

/** True for an assistant entry. Claude Code writes one entry per content block of a streamed answer. */
export function isAssistantEntry(entry: TranscriptEntry): boolean {
  return entry.type === 'assistant';
}

/** Names of the tools an assistant entry calls, in order (MCP tools keep their `mcp__…` prefix). */
export function toolUseNames(entry: TranscriptEntry): string[] {
  if (entry.type !== 'assistant') return [];
  const blocks = content(entry);
  if (!Array.isArray(blocks)) return [];
  const names: string[] = [];
  for (const block of blocks) {
    if (typeof block !== 'object' || block === null) continue;
    const b = block as { type?: unknown; name?: unknown };
    if (b.type === 'tool_use' && typeof b.name === 'string') names.push(b.name);
  }
  return names;
}

/** The opening of the model-written summary that follows a compaction. */
const COMPACT_SUMMARY_PREFIX = 'This session is being continued from a previous conversation';

/** Origins of user lines that a person typed; other kinds (task notifications, plugins, peers…) are not. */
const HUMAN_ORIGINS = new Set(['human']);

/** Prompt sources whose words were not written by the user. */
const NON_AUTHORED_PROMPT_SOURCES = new Set(['suggestion_accepted', 'system', 'sdk']);

function fromHuman(record: Record<string, unknown>): boolean {
  const origin = record['origin'];
  if (typeof origin === 'object' && origin !== null) {
    const kind = (origin as { kind?: unknown }).kind;
    if (typeof kind === 'string' && !HUMAN_ORIGINS.has(kind)) return false;
  }
  const source = record['promptSource'];
  return !(typeof source === 'string' && NON_AUTHORED_PROMPT_SOURCES.has(source));
}

/**
 * The text a person typed, or null when the entry is anything else: assistant output, a tool result,
 * a subagent prompt (sidechain), a harness-written line (`isMeta`), a compaction summary, or a user line
 * marked as coming from a task notification, a plugin or an accepted suggestion. A message typed while the
 * agent was busy (a `queued_command` attachment) counts as typed. Harness markup inside the text is left
 * for `capture.ts` to strip; only the entry-level tests live here.
 */
export function userAuthoredText(entry: TranscriptEntry): string | null {
  if (entry['isSidechain'] === true || entry['isMeta'] === true || entry['isCompactSummary'] === true) return null;
  if (entry.type === 'attachment') {
    const a = entry['attachment'];
    if (typeof a !== 'object' || a === null) return null;
    const att = a as Record<string, unknown>;
    if (att['type'] !== 'queued_command' || att['isMeta'] === true || !fromHuman(att)) return null;
    const prompt = att['prompt'];
    return typeof prompt === 'string' && prompt.trim() !== '' ? prompt : null;
  }
  if (entry.type !== 'user' || entry['toolUseResult'] !== undefined || !fromHuman(entry)) return null;
  const c = content(entry);
  let text: string | null = null;
  if (typeof c === 'string') text = c;
  else if (Array.isArray(c)) {
    const parts: string[] = [];
    for (const block of c) {
      if (typeof block !== 'object' || block === null) continue;
      const b = block as { type?: unknown; text?: unknown };
      if (b.type === 'tool_result') return null;
      if (b.type === 'text' && typeof b.text === 'string') parts.push(b.text);
    }
    text = parts.length ? parts.join('\n\n') : null;
  }
  if (text === null || text.trim() === '') return null;
  if (text.trimStart().startsWith(COMPACT_SUMMARY_PREFIX)) return null;
  return text;
}

/** ISO timestamp of the entry when it has a valid one. */
export function entryTimestamp(entry: TranscriptEntry): string | null {
  const t = entry['timestamp'];
  if (typeof t !== 'string') return null;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}
