/**
 * The memory gate: at the end of an agent's turn, decide whether it may stop or must first store what it
 * did. It reads only the names of the tools the agent called (what it did, not what it said), so it proves
 * that a store happened, never that it was a good one.
 *
 * Rules, in the order they are applied:
 *   1. Loop guard — the stop that follows a block (`stop_hook_active`) passes: a gate that blocks its own
 *      retry never lets a session end.
 *   2. Small sessions pass — fewer than `minToolCalls` tool calls in the whole session.
 *   3. Interval — fewer than `interval` assistant entries since the last check: pass without checking
 *      (Claude Code writes one entry per content block, so this still checks at nearly every stop).
 *   A check then looks only at the window since the previous check, so an early slip is reported once,
 *   by the check that covers it, and never again: a flag no later behaviour can satisfy is a nag.
 *   4. Edited, stored nothing — an Edit, Write, MultiEdit or NotebookEdit call in the window and no store
 *      in it. No minimum length: a short session that edits is the one most easily forgotten.
 *   5. No lookup at the first check — the first check of a session sees no lookup at all.
 *   6. Recall order — a store in the window that came before the session's first lookup (or with no
 *      lookup yet): without looking first, the agent cannot see the note it should replace.
 *   7. Read-only work — no edits and no store in the window, yet at least `readOnlyEntries` assistant
 *      entries of work with tool calls other than memory calls: exploring is work worth storing. With a
 *      lookup in the window this is the read-only rule; without one it is the "no lookup, no store" case.
 * Every rule broken adds a reason; a block ends with "This is mandatory.".
 *
 * Pure: the caller reads the transcript, feeds each assistant entry to `observeEntry`, asks `decideStop`,
 * and persists the state it returns.
 */

export interface StopGateThresholds {
  /** Sessions with fewer tool calls than this pass unchecked. Default 3. */
  minToolCalls: number;
  /** Assistant entries needed since the last check before checking again. Default 2. */
  interval: number;
  /** Assistant entries of read-only work in a window that must be stored. Default 4. */
  readOnlyEntries: number;
}

export const DEFAULT_STOP_GATE: StopGateThresholds = { minToolCalls: 3, interval: 2, readOnlyEntries: 4 };

/** Native tools that change files. Matched by exact name: an MCP tool called `…EditIssue` edits no file. */
export const EDIT_TOOLS: readonly string[] = ['Edit', 'Write', 'MultiEdit', 'NotebookEdit'];
/**
 * Memory tools, matched as substrings so that MCP-prefixed names count
 * (`mcp__plugin_cairn_cairn__memory_store`, `mcp__cairn__context_query`).
 */
export const STORE_TOOLS: readonly string[] = ['memory_store', 'save_memory', 'task_note', 'route_create', 'route_update', 'commit_turn'];
export const LOOKUP_TOOLS: readonly string[] = ['context_query', 'search_memory', 'route_query', 'memory_recall'];

export type ToolClass = 'edit' | 'store' | 'lookup' | 'other';

export function classifyTool(name: string): ToolClass {
  if (EDIT_TOOLS.includes(name)) return 'edit';
  if (STORE_TOOLS.some((t) => name.includes(t))) return 'store';
  if (LOOKUP_TOOLS.some((t) => name.includes(t))) return 'lookup';
  return 'other';
}

/** What happened since the last check. */
export interface GateWindow {
  /** Assistant entries. */
  entries: number;
  toolCalls: number;
  edits: number;
  /** Distinct edited tool names, for the message (e.g. ["Edit", "Write"]). */
  editTools: string[];
  stores: number;
  lookups: number;
  /** Tool calls that are neither memory calls nor edits (reads, searches, shell…). */
  otherCalls: number;
  /** Stores made while the session had not looked anything up yet. */
  storesBeforeFirstLookup: number;
}

/** What the gate remembers about one session between stops. */
export interface GateState {
  /** Format version of this record. */
  version: 1;
  /** Bytes of the transcript already read (complete lines only). */
  offset: number;
  /** Assistant entries read so far. */
  entries: number;
  /** Tool calls read so far, whole session. */
  toolCalls: number;
  /** Whether the session has looked anything up yet. */
  lookedUp: boolean;
  /** Checks run so far (0: the next check is the first). */
  checks: number;
  window: GateWindow;
}

function emptyWindow(): GateWindow {
  return { entries: 0, toolCalls: 0, edits: 0, editTools: [], stores: 0, lookups: 0, otherCalls: 0, storesBeforeFirstLookup: 0 };
}

export function emptyGateState(): GateState {
  return { version: 1, offset: 0, entries: 0, toolCalls: 0, lookedUp: false, checks: 0, window: emptyWindow() };
}

/** Accepts a stored state only when every field has the expected type; anything else starts over. */
export function parseGateState(value: unknown): GateState | null {
  if (typeof value !== 'object' || value === null) return null;
  const s = value as Partial<GateState>;
  const w = s.window as Partial<GateWindow> | undefined;
  const nat = (x: unknown) => typeof x === 'number' && Number.isInteger(x) && x >= 0;
  if (s.version !== 1 || !nat(s.offset) || !nat(s.entries) || !nat(s.toolCalls) || !nat(s.checks) || typeof s.lookedUp !== 'boolean') return null;
  if (!w || !['entries', 'toolCalls', 'edits', 'stores', 'lookups', 'otherCalls', 'storesBeforeFirstLookup'].every((k) => nat((w as Record<string, unknown>)[k]))) return null;
  if (!Array.isArray(w.editTools) || !w.editTools.every((t) => typeof t === 'string')) return null;
  return s as GateState;
}

/** Records one assistant entry (with the names of the tools it calls) into the state, in transcript order. */
export function observeEntry(state: GateState, toolNames: readonly string[]): GateState {
  const next: GateState = { ...state, window: { ...state.window, editTools: [...state.window.editTools] } };
  next.entries++;
  next.window.entries++;
  for (const name of toolNames) {
    next.toolCalls++;
    next.window.toolCalls++;
    switch (classifyTool(name)) {
      case 'edit':
        next.window.edits++;
        if (!next.window.editTools.includes(name)) next.window.editTools.push(name);
        break;
      case 'store':
        next.window.stores++;
        if (!next.lookedUp) next.window.storesBeforeFirstLookup++;
        break;
      case 'lookup':
        next.window.lookups++;
        next.lookedUp = true;
        break;
      default:
        next.window.otherCalls++;
    }
  }
  return next;
}

export type GateRule = 'loop-guard' | 'small-session' | 'interval' | 'edits-without-store' | 'no-lookup-first-check' | 'recall-order' | 'read-only';

export interface GateDecision {
  block: boolean;
  /** Rules that decided: the passing rule (loop guard, small session, interval) or every broken rule. */
  rules: GateRule[];
  /** One sentence per broken rule (empty when passing). */
  reasons: string[];
  /** The state to persist: unchanged when no check ran, window reset after a check. */
  state: GateState;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * Decides one stop. `state` must already hold every assistant entry of the transcript (see observeEntry).
 * When a check runs — whatever its outcome — the returned state starts a new window.
 */
export function decideStop(state: GateState, input: { stopHookActive: boolean }, thresholds: StopGateThresholds = DEFAULT_STOP_GATE): GateDecision {
  if (input.stopHookActive) return { block: false, rules: ['loop-guard'], reasons: [], state };
  if (state.toolCalls < thresholds.minToolCalls) return { block: false, rules: ['small-session'], reasons: [], state };
  if (state.window.entries < thresholds.interval) return { block: false, rules: ['interval'], reasons: [], state };

  const w = state.window;
  const firstCheck = state.checks === 0;
  const rules: GateRule[] = [];
  const reasons: string[] = [];
  if (w.edits > 0 && w.stores === 0) {
    rules.push('edits-without-store');
    reasons.push(
      `Changed files with ${plural(w.edits, 'edit call')} (${w.editTools.join(', ')}) since the last check but stored nothing: save what changed and why (memory_store), superseding the older note if one exists.`,
    );
  }
  if (firstCheck && !state.lookedUp) {
    rules.push('no-lookup-first-check');
    reasons.push('Worked without looking anything up: query memory (context_query, search_memory or route_query) before exploring what you do not already know.');
  }
  if (w.storesBeforeFirstLookup > 0) {
    rules.push('recall-order');
    reasons.push(
      `Stored ${plural(w.storesBeforeFirstLookup, 'memory', 'memories')} before the first lookup of this session: look up first, so an existing note gets superseded instead of duplicated.`,
    );
  }
  if (w.edits === 0 && w.stores === 0 && w.otherCalls > 0 && w.entries >= thresholds.readOnlyEntries) {
    rules.push('read-only');
    reasons.push(
      w.lookups > 0
        ? `Explored over ${plural(w.entries, 'entry', 'entries')} (${plural(w.otherCalls, 'tool call')}) after looking up, and stored nothing: save what you learned (memory_store) or where things live (route_create).`
        : `Explored over ${plural(w.entries, 'entry', 'entries')} (${plural(w.otherCalls, 'tool call')}) with no lookup and nothing stored: save what you learned (memory_store) or where things live (route_create).`,
    );
  }
  const after: GateState = { ...state, checks: state.checks + 1, window: emptyWindow() };
  return { block: reasons.length > 0, rules, reasons, state: after };
}

/** The message a block shows the agent: every reason, then "This is mandatory.". */
export function formatBlock(reasons: readonly string[]): string {
  return `cairn memory check: ${reasons.join(' ')} This is mandatory.`;
}
