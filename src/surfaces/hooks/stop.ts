import { decideStop, emptyGateState, formatBlock, observeEntry, parseGateState, type GateState, type StopGateThresholds } from '../../core/stop-gate.js';
import { isAssistantEntry, parseTranscriptLine, toolUseNames } from '../../core/transcript.js';
import { fileIdentity, readState, sessionKey, statePath, stringField, writeState, type HookContext, type HookOutcome } from './hook-io.js';
import { readLines } from './jsonl-reader.js';

/**
 * The Stop hook: the memory gate (rules in core/stop-gate.ts). It loads no model, no tokenizer and no
 * database: it reads the transcript from where it stopped last time and a small per-session state file.
 * Exit 2 with the reasons on stderr sends the agent back; anything unexpected lets the session stop.
 */

const ASSISTANT = Buffer.from('"assistant"');

interface StoredGate {
  /** Inode of the transcript the state was read from: another file means starting over. */
  ino: number;
  gate: GateState;
}

function loadGate(path: string, ino: number, size: number): GateState {
  const raw = readState(path) as Partial<StoredGate> | null;
  const gate = parseGateState(raw?.gate);
  if (!gate || raw?.ino !== ino || gate.offset > size) return emptyGateState();
  return gate;
}

export async function handleStop(ctx: HookContext, settings: StopGateThresholds & { enabled: boolean }): Promise<HookOutcome> {
  const { input, log } = ctx;
  if (!settings.enabled) return { code: 0 };
  // Loop guard first: the stop after a block is never checked, and costs nothing.
  if (input.stop_hook_active === true) return { code: 0 };
  const transcript = stringField(input, 'transcript_path');
  const sessionId = stringField(input, 'session_id');
  if (!transcript) {
    log.warn('stop: no transcript_path in the hook input; letting the session stop', { sessionId });
    return { code: 0 };
  }
  const identity = fileIdentity(transcript);
  if (!identity) {
    log.warn('stop: transcript not found; letting the session stop', { transcript, sessionId });
    return { code: 0 };
  }
  const path = statePath(ctx.dataDir, 'stop', sessionKey(sessionId, transcript));
  let gate = loadGate(path, identity.ino, identity.size);
  const observe = (line: string) => {
    const entry = parseTranscriptLine(line);
    if (entry && isAssistantEntry(entry)) gate = observeEntry(gate, toolUseNames(entry));
  };
  const from = gate.offset;
  const read = await readLines(transcript, { from, wanted: (b) => b.includes(ASSISTANT), onLine: observe });
  let offset = read.endOffset;
  if (read.tail !== null && parseTranscriptLine(read.tail)) {
    // A complete last line without its newline: count it now; a later newline is an empty line.
    observe(read.tail);
    offset = read.size;
  }
  gate = { ...gate, offset };
  const decision = decideStop(gate, { stopHookActive: false }, settings);
  try {
    writeState(path, { ino: identity.ino, gate: decision.state } satisfies StoredGate);
  } catch (err) {
    // Without its state every check would be a first check and repeat itself: let the session stop.
    log.error('stop: cannot save the gate state; letting the session stop', { path, error: (err as Error).message });
    return { code: 0 };
  }
  if (!decision.block) {
    log.debug('stop: pass', { sessionId, rules: decision.rules, from, to: offset });
    return { code: 0 };
  }
  log.info('stop: blocked', { sessionId, rules: decision.rules, from, to: offset });
  ctx.streams.stderr.write(`${formatBlock(decision.reasons)}\n`);
  return { code: 2 };
}
