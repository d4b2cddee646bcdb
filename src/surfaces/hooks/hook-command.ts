import type { Command } from 'commander';

/**
 * `cairn hook <event>`: the entry point Claude Code's hooks call (pre-compact, stop, session-start,
 * user-prompt-submit), reading the hook's JSON on stdin. Everything is imported when the command runs,
 * so registering it costs the other commands nothing and the hook loads only what its event needs.
 */
export function registerHookCommand(program: Command, io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream }): void {
  program
    .command('hook')
    .description('run a Claude Code hook: pre-compact, stop, session-start or user-prompt-submit (reads the hook JSON on stdin)')
    .argument('<event>', 'pre-compact | stop | session-start | user-prompt-submit')
    .option('--db <path>', 'database file')
    .option('--namespace <ns>', 'namespace (default: the git repository of the hook input cwd)')
    .action(async (event: string, _o: unknown, cmd: Command) => {
      const g = cmd.optsWithGlobals() as { db?: string; namespace?: string };
      await runHookInProcess(event, io, { db: g.db, namespace: g.namespace });
    });
}

/**
 * Runs a hook with this process's stdin, environment and working directory, and sets its exit code.
 * `bin/cairn.js` calls it directly for a bare `cairn hook <event>`, skipping the CLI's own imports: the
 * Stop gate runs at every stop and must start fast.
 */
export async function runHookInProcess(
  event: string,
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream } = { stdout: process.stdout, stderr: process.stderr },
  flags: { db?: string | undefined; namespace?: string | undefined } = {},
): Promise<number> {
  const { runHook } = await import('./run-hook.js');
  const outcome = await runHook(event, { stdin: process.stdin, stdout: io.stdout, stderr: io.stderr, env: process.env, cwd: process.cwd(), flags });
  process.exitCode = outcome.code;
  // Work abandoned at a deadline may still be running: do not let it hold the agent up.
  if (outcome.abandoned) setTimeout(() => process.exit(outcome.code), 20).unref();
  return outcome.code;
}
