/**
 * Writes Claude Code session transcripts in their real JSONL shape — envelope fields, one assistant content
 * block per line, tool results as user lines with `toolUseResult`, compaction boundaries and summaries,
 * slash-command echoes, local command output, system reminders, queued messages — for the hook tests and
 * the hooks benchmark. Shapes follow the integration reference (§2), values are invented.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';

export interface TranscriptOptions {
  sessionId: string;
  cwd: string;
  /** Start time; every line moves the clock by a second. */
  start?: Date;
}

type Line = Record<string, unknown>;

export class TranscriptBuilder {
  readonly lines: string[] = [];
  private parent: string | null = null;
  private clock: number;
  private toolIds = 0;

  constructor(private readonly options: TranscriptOptions) {
    this.clock = (options.start ?? new Date('2026-11-02T09:00:00.000Z')).getTime();
  }

  private envelope(extra: Line): Line {
    const uuid = randomUUID();
    const line: Line = {
      parentUuid: this.parent,
      isSidechain: false,
      userType: 'external',
      cwd: this.options.cwd,
      sessionId: this.options.sessionId,
      version: '2.1.300',
      gitBranch: 'main',
      ...extra,
      uuid,
      timestamp: new Date((this.clock += 1000)).toISOString(),
    };
    this.parent = uuid;
    return line;
  }

  private push(line: Line): this {
    this.lines.push(JSON.stringify(line));
    return this;
  }

  /** A prompt the user typed. */
  user(text: string, extra: Line = {}): this {
    return this.push(this.envelope({ type: 'user', message: { role: 'user', content: text }, ...extra }));
  }

  /** A user message with text blocks (e.g. a prompt plus an IDE selection reminder). */
  userBlocks(...texts: string[]): this {
    return this.push(this.envelope({ type: 'user', message: { role: 'user', content: texts.map((text) => ({ type: 'text', text })) } }));
  }

  /** A slash command as Claude Code echoes it, plus its local output. */
  slashCommand(name: string, output = ''): this {
    this.push(
      this.envelope({
        type: 'user',
        message: { role: 'user', content: `<command-name>${name}</command-name>\n<command-message>${name.slice(1)}</command-message>\n<command-args></command-args>` },
      }),
    );
    return this.push(this.envelope({ type: 'user', message: { role: 'user', content: `<local-command-stdout>${output}</local-command-stdout>` } }));
  }

  /** A harness-written user line (skill body, hook echo). */
  meta(text: string): this {
    return this.push(this.envelope({ type: 'user', isMeta: true, message: { role: 'user', content: text } }));
  }

  /** Text from the assistant: one line per block, like a streamed answer. */
  assistantText(text: string): this {
    return this.push(this.envelope(this.assistantMessage({ type: 'text', text })));
  }

  /**
   * A tool call and its result: the assistant's tool_use line, then the user line carrying the tool_result
   * and the structured `toolUseResult`.
   */
  tool(name: string, input: Record<string, unknown> = {}, result = 'ok'): this {
    const id = `toolu_${String(++this.toolIds).padStart(6, '0')}`;
    this.push(this.envelope(this.assistantMessage({ type: 'tool_use', id, name, input })));
    return this.push(
      this.envelope({
        type: 'user',
        message: { role: 'user', content: [{ tool_use_id: id, type: 'tool_result', content: result }] },
        toolUseResult: { stdout: result, stderr: '', interrupted: false, isImage: false },
      }),
    );
  }

  /** Only the assistant's tool_use line (the transcript may lag behind the result). */
  toolCallOnly(name: string, input: Record<string, unknown> = {}): this {
    const id = `toolu_${String(++this.toolIds).padStart(6, '0')}`;
    return this.push(this.envelope(this.assistantMessage({ type: 'tool_use', id, name, input })));
  }

  private assistantMessage(block: Line): Line {
    return {
      type: 'assistant',
      requestId: `req_${randomUUID().slice(0, 12)}`,
      message: {
        id: `msg_${randomUUID().slice(0, 16)}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-opus-4-5',
        content: [block],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 40, cache_read_input_tokens: 20_000, cache_creation_input_tokens: 0 },
      },
    };
  }

  /** A compaction: the boundary, then the model-written summary as a user line. */
  compaction(trigger: 'auto' | 'manual' = 'auto'): this {
    const before = this.parent;
    this.parent = null;
    this.push(
      this.envelope({
        type: 'system',
        subtype: 'compact_boundary',
        content: 'Conversation compacted',
        logicalParentUuid: before,
        level: 'info',
        compactMetadata: { trigger, preTokens: 150_000 },
      }),
    );
    return this.push(
      this.envelope({
        type: 'user',
        isCompactSummary: true,
        isVisibleInTranscriptOnly: true,
        message: {
          role: 'user',
          content:
            'This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nPrimary request: the user decided we must always use pnpm and never npm.',
        },
      }),
    );
  }

  /** A message typed while the agent was busy. */
  queued(text: string): this {
    return this.push(this.envelope({ type: 'attachment', attachment: { type: 'queued_command', prompt: text, origin: { kind: 'human' } } }));
  }

  /** Bookkeeping lines a transcript also holds. */
  bookkeeping(): this {
    this.push({ type: 'file-history-snapshot', messageId: randomUUID(), snapshot: { trackedFileBackups: {}, timestamp: new Date(this.clock).toISOString() }, isSnapshotUpdate: false });
    this.push(this.envelope({ type: 'system', subtype: 'turn_duration', durationMs: 5123, level: 'info' }));
    return this.push({ type: 'ai-title', aiTitle: 'Checkout VAT rounding', sessionId: this.options.sessionId });
  }

  text(): string {
    return `${this.lines.join('\n')}\n`;
  }

  /** Takes the lines written so far (to append them to a file) and starts a new batch. */
  drain(): string {
    const out = this.text();
    this.lines.length = 0;
    return out;
  }
}

/**
 * Streams a large transcript to `path`: rounds of realistic traffic (big tool results dominate the bytes),
 * with `decisionEvery` rounds carrying a typed decision. Resolves with the decisions written, in order.
 */
export async function writeLargeTranscript(path: string, options: TranscriptOptions & { bytes: number; decisionEvery?: number; hugeLineBytes?: number }): Promise<{ bytes: number; decisions: string[]; rounds: number }> {
  const out = createWriteStream(path);
  const b = new TranscriptBuilder(options);
  const decisions: string[] = [];
  const filler = 'const value = compute(input); // line of a file the agent read\n'.repeat(400); // ~24 KB per read
  let bytes = 0;
  let round = 0;
  const write = async (text: string) => {
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await new Promise<void>((r) => out.once('drain', () => r()));
  };
  if (options.hugeLineBytes) {
    // One tool result bigger than the reader's line limit (an inlined image, a giant log).
    b.tool('Bash', { command: 'cat big.log' }, 'x'.repeat(options.hugeLineBytes));
    await write(b.drain());
  }
  while (bytes < options.bytes) {
    round++;
    if (options.decisionEvery && round % options.decisionEvery === 0) {
      const d = `Decision ${round}: from now on the export job for region ${round % 97} runs at 02:${String(round % 60).padStart(2, '0')} UTC.`;
      decisions.push(d);
      b.user(d);
    } else {
      b.user('ok');
    }
    b.assistantText('Looking at the code.').tool('Read', { file_path: `src/module-${round % 50}.ts` }, filler).tool('Grep', { pattern: 'compute' }, 'src/a.ts:1\nsrc/b.ts:2');
    if (round % 5 === 0) b.tool('Edit', { file_path: `src/module-${round % 50}.ts`, old_string: 'a', new_string: 'b' }, 'edited');
    if (round % 10 === 0) b.tool('mcp__plugin_cairn_cairn__memory_store', { content: `note ${round}` }, 'stored');
    b.assistantText('Done.');
    await write(b.drain());
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  return { bytes, decisions, rounds: round };
}
