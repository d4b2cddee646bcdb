import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { entryTimestamp, isToolResultLine, parseTranscriptLine, toolUseNames, userAuthoredText, type TranscriptEntry } from './transcript.js';

const line = (value: unknown): string => JSON.stringify(value);
const parse = (value: unknown): TranscriptEntry => {
  const e = parseTranscriptLine(line(value));
  assert.ok(e, 'parses');
  return e;
};

const base = { parentUuid: null, isSidechain: false, userType: 'external', cwd: '/home/u/repo', sessionId: 's1', version: '2.1.300', uuid: 'u1', timestamp: '2026-11-02T10:00:00.000Z' };

describe('transcript entries', () => {
  it('parses permissively: blank, truncated, non-object and typeless lines are null', () => {
    assert.equal(parseTranscriptLine(''), null);
    assert.equal(parseTranscriptLine('{"type":"user","message":{"role":"us'), null);
    assert.equal(parseTranscriptLine('[1,2]'), null);
    assert.equal(parseTranscriptLine('{"message":{}}'), null);
    assert.equal(parseTranscriptLine('{"type":"file-history-snapshot","snapshot":{}}')?.type, 'file-history-snapshot');
  });

  it('lists the tool calls of an assistant entry, MCP names verbatim', () => {
    const e = parse({
      ...base,
      type: 'assistant',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-opus-4-5',
        content: [
          { type: 'thinking', thinking: 'hm', signature: 'x' },
          { type: 'tool_use', id: 'toolu_1', name: 'mcp__plugin_cairn_cairn__context_query', input: { query: 'vat' } },
          { type: 'tool_use', id: 'toolu_2', name: 'Edit', input: {} },
        ],
      },
    });
    assert.deepEqual(toolUseNames(e), ['mcp__plugin_cairn_cairn__context_query', 'Edit']);
    assert.deepEqual(toolUseNames(parse({ type: 'user', message: { role: 'user', content: 'hi' } })), []);
  });

  it('finds typed text: string content, text blocks, queued messages', () => {
    assert.equal(userAuthoredText(parse({ ...base, type: 'user', message: { role: 'user', content: 'Use pnpm.' } })), 'Use pnpm.');
    const blocks = parse({
      ...base,
      type: 'user',
      message: { role: 'user', content: [{ type: 'text', text: 'First part.' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }, { type: 'text', text: 'Second.' }] },
    });
    assert.equal(userAuthoredText(blocks), 'First part.\n\nSecond.');
    const queued = parse({ ...base, type: 'attachment', attachment: { type: 'queued_command', prompt: 'Also keep the old endpoint.', origin: { kind: 'human' } } });
    assert.equal(userAuthoredText(queued), 'Also keep the old endpoint.');
  });

  it('refuses what a person did not type', () => {
    const refused: unknown[] = [
      { ...base, type: 'user', toolUseResult: { stdout: 'x' }, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] } },
      { ...base, type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x' }] } },
      { ...base, type: 'user', isSidechain: true, message: { role: 'user', content: 'Explore the repo and report.' } },
      { ...base, type: 'user', isMeta: true, message: { role: 'user', content: 'Skill body text' } },
      { ...base, type: 'user', isCompactSummary: true, isVisibleInTranscriptOnly: true, message: { role: 'user', content: 'This session is being continued from a previous conversation that ran out of context.' } },
      { ...base, type: 'user', message: { role: 'user', content: 'This session is being continued from a previous conversation that ran out of context. Summary: …' } },
      { ...base, type: 'user', origin: { kind: 'task-notification' }, message: { role: 'user', content: 'Background task finished.' } },
      { ...base, type: 'user', promptSource: 'suggestion_accepted', message: { role: 'user', content: 'Run the tests again.' } },
      { ...base, type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] } },
      { ...base, type: 'attachment', attachment: { type: 'queued_command', prompt: 'forwarded', isMeta: true } },
      { ...base, type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', compactMetadata: { trigger: 'auto', preTokens: 1 } },
    ];
    for (const value of refused) assert.equal(userAuthoredText(parse(value)), null, line(value));
  });

  it('spots tool-result lines from raw text, not from quoted words', () => {
    assert.equal(isToolResultLine(line({ type: 'user', toolUseResult: { stdout: '' }, message: {} })), true);
    assert.equal(isToolResultLine(line({ type: 'user', message: { role: 'user', content: 'the "toolUseResult": key and "type":"tool_result" in prose' } })), false);
  });

  it('reads timestamps as ISO or null', () => {
    assert.equal(entryTimestamp(parse({ type: 'user', timestamp: '2026-11-02T10:00:00Z' })), '2026-11-02T10:00:00.000Z');
    assert.equal(entryTimestamp(parse({ type: 'user', timestamp: 'yesterday' })), null);
  });
});
