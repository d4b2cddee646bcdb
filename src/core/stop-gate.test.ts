import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyTool, decideStop, emptyGateState, formatBlock, observeEntry, parseGateState, type GateState } from './stop-gate.js';

/** Feeds assistant entries (each a list of tool names; [] for a text-only entry) into a state. */
function feed(state: GateState, ...entries: string[][]): GateState {
  return entries.reduce((s, names) => observeEntry(s, names), state);
}

const check = (s: GateState, stopHookActive = false) => decideStop(s, { stopHookActive });

describe('stop gate', () => {
  it('classifies tools: native edits by exact name, memory tools by substring (MCP prefixes count)', () => {
    assert.equal(classifyTool('Edit'), 'edit');
    assert.equal(classifyTool('NotebookEdit'), 'edit');
    assert.equal(classifyTool('mcp__tracker__EditIssue'), 'other');
    assert.equal(classifyTool('mcp__plugin_cairn_cairn__memory_store'), 'store');
    for (const t of ['save_memory', 'task_note', 'route_create', 'route_update', 'commit_turn']) assert.equal(classifyTool(`mcp__cairn__${t}`), 'store');
    for (const t of ['context_query', 'search_memory', 'route_query']) assert.equal(classifyTool(`mcp__plugin_cairn_cairn__${t}`), 'lookup');
    assert.equal(classifyTool('Read'), 'other');
  });

  it("the seed's case: a lookup and two edits block; with a store it passes", () => {
    const blocked = check(feed(emptyGateState(), ['context_query'], ['Edit'], ['Edit']));
    assert.equal(blocked.block, true);
    assert.deepEqual(blocked.rules, ['edits-without-store']);
    assert.match(formatBlock(blocked.reasons), /2 edit calls.*This is mandatory\.$/u);
    const passed = check(feed(emptyGateState(), ['context_query'], ['Edit'], ['Edit'], ['memory_store']));
    assert.equal(passed.block, false);
  });

  it('loop guard: stop_hook_active passes without checking or touching the state', () => {
    const s = feed(emptyGateState(), ['Read'], ['Edit'], ['Edit']);
    const d = check(s, true);
    assert.equal(d.block, false);
    assert.deepEqual(d.rules, ['loop-guard']);
    assert.equal(d.state, s);
  });

  it('small sessions pass: fewer than 3 tool calls, even with an edit and no lookup', () => {
    const d = check(feed(emptyGateState(), ['Edit'], [], ['Edit']));
    assert.deepEqual([d.block, d.rules], [false, ['small-session']]);
    assert.equal(d.state.checks, 0, 'no check ran');
  });

  it('interval: fewer than 2 assistant entries since the last check passes and keeps the window open', () => {
    let s = feed(emptyGateState(), ['context_query', 'Read', 'Edit'], ['memory_store']);
    s = check(s).state; // first check: passes, window reset
    s = feed(s, ['Edit']);
    const d = check(s);
    assert.deepEqual([d.block, d.rules], [false, ['interval']]);
    // The edit is still in the window: the next entry makes the check run and report it.
    const later = check(feed(d.state, []));
    assert.deepEqual(later.rules, ['edits-without-store']);
  });

  it('edited and stored nothing blocks without waiting for the read-only length (edits no longer slip through)', () => {
    // Three entries only — below the 4 entries the read-only rule needs, where the old check waited.
    const d = check(feed(emptyGateState(), ['context_query'], ['Edit'], ['Write']));
    assert.equal(d.block, true);
    assert.deepEqual(d.rules, ['edits-without-store']);
    assert.match(d.reasons[0] ?? '', /Edit, Write/u);
  });

  it('no lookup at the first check blocks; later checks do not repeat it', () => {
    const first = check(feed(emptyGateState(), ['Read'], ['Grep'], ['memory_store']));
    assert.deepEqual(first.rules, ['no-lookup-first-check', 'recall-order']);
    // Later work, still without a lookup but with a store and short: nothing repeats.
    const second = check(feed(first.state, ['Read'], ['memory_store'] /* after no lookup: a new slip */));
    assert.deepEqual(second.rules, ['recall-order'], 'only the new slip of this window');
    const third = check(feed(second.state, ['Read'], []));
    assert.equal(third.block, false, 'nothing new: no nagging');
  });

  it('recall order: a store before the first lookup is reported once, at the check that covers it (no blocking forever)', () => {
    // The session stores first, then looks up and edits with a store: blocked once for the order…
    const first = check(feed(emptyGateState(), ['memory_store'], ['context_query'], ['Read'], ['Edit', 'memory_store']));
    assert.deepEqual([first.block, first.rules], [true, ['recall-order']]);
    // …the retry stop (stop_hook_active) passes, and every later check of good behaviour passes too.
    assert.equal(check(first.state, true).block, false);
    let s = first.state;
    for (let round = 0; round < 3; round++) {
      const d = check(feed(s, ['context_query'], ['Edit'], ['memory_store']));
      assert.equal(d.block, false, `round ${round}: an early slip must not block later stops`);
      s = d.state;
    }
  });

  it('read-only rule: looked up, explored over 4 entries, stored nothing → block; 3 entries or a store → pass', () => {
    const base = check(feed(emptyGateState(), ['context_query'], ['Read'], ['memory_store'])).state;
    assert.deepEqual(check(feed(base, ['context_query'], ['Read'], ['Grep'], [])).rules, ['read-only']);
    assert.equal(check(feed(base, ['context_query'], ['Read'], [])).block, false, 'below 4 entries');
    assert.equal(check(feed(base, ['context_query'], ['Read'], ['Grep'], ['memory_store'])).block, false);
    // Without a lookup in the window it is the "no lookup, no store" case, with its own wording.
    const noLookup = check(feed(base, ['Read'], ['Grep'], ['Read'], []));
    assert.deepEqual(noLookup.rules, ['read-only']);
    assert.match(noLookup.reasons[0] ?? '', /no lookup and nothing stored/u);
    // Talking is not exploring: entries without tool calls never trip it.
    assert.equal(check(feed(base, [], [], [], [])).block, false);
  });

  it('thresholds are parameters', () => {
    const s = feed(emptyGateState(), ['context_query'], ['Edit']);
    assert.equal(decideStop(s, { stopHookActive: false }, { minToolCalls: 2, interval: 2, readOnlyEntries: 4 }).block, true);
    assert.equal(decideStop(s, { stopHookActive: false }, { minToolCalls: 3, interval: 2, readOnlyEntries: 4 }).block, false);
    assert.equal(decideStop(s, { stopHookActive: false }, { minToolCalls: 2, interval: 3, readOnlyEntries: 4 }).block, false);
  });

  it('a stored state is accepted only when well formed', () => {
    const s = check(feed(emptyGateState(), ['context_query'], ['Edit'], ['Edit'])).state;
    assert.deepEqual(parseGateState(JSON.parse(JSON.stringify(s))), s);
    assert.equal(parseGateState({ ...s, version: 2 }), null);
    assert.equal(parseGateState({ ...s, offset: -1 }), null);
    assert.equal(parseGateState({ ...s, window: { ...s.window, editTools: 'Edit' } }), null);
    assert.equal(parseGateState('nonsense'), null);
  });
});
