import { readFileSync } from 'node:fs';
import { removeCaptureJobs } from '../hooks/hook-io.js';
import type { Command } from 'commander';
import { CairnError } from '../../interfaces/errors.js';
import type { OpenedEngine } from '../open-engine.js';
import { displayDb } from '../settings.js';

/** Opens the engine from the global flags (the CLI's lazy opener). */
export type OpenEngineFn = (flags: { db?: string; namespace?: string }, opts?: { withoutEmbedder?: boolean; longLived?: boolean }) => Promise<OpenedEngine>;

/** An AbortSignal that fires on SIGINT or SIGTERM; `dispose` removes the handlers. */
function stopSignal(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

function count(value: string): number {
  if (!/^\d+$/u.test(value.trim())) throw new CairnError('INVALID_INPUT', `must be a whole number (got ${JSON.stringify(value)})`, { field: 'rate-limit' });
  return Number(value);
}

function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/u.test(value.trim()) || n > 65_535) throw new CairnError('INVALID_INPUT', `port: must be a whole number from 0 to 65535 (got ${JSON.stringify(value)})`, { field: 'port' });
  return n;
}

/**
 * `cairn mcp` (stdio) and `cairn serve` (Streamable HTTP). The MCP modules load only when one of these runs,
 * and the embedding model only on the first tool call that needs it, so `initialize` is answered at once.
 */
export function registerMcpCommands(program: Command, open: OpenEngineFn): void {
  const version = program.version() ?? '0.0.0';

  program
    .command('mcp')
    .description('serve the memory tools to a coding agent over MCP on stdin/stdout')
    .option('--db <path>', 'database file')
    .option('--namespace <ns>', 'default namespace of the tools')
    .action(async (_o: unknown, cmd: Command) => {
      const g = cmd.optsWithGlobals() as { db?: string; namespace?: string };
      const opened = await open(g, { longLived: true });
      const stop = stopSignal();
      try {
        const { serveStdio } = await import('./mcp-stdio.js');
        await serveStdio({ engine: opened.engine, logger: opened.logger, version, signal: stop.signal });
      } finally {
        stop.dispose();
        await opened.close();
      }
    });

  program
    .command('serve')
    .description('serve MCP (/mcp), the REST API (/api) and the brain page (/) over HTTP until interrupted')
    .option('--db <path>', 'database file')
    .option('--namespace <ns>', 'default namespace of the tools')
    .option('--port <n>', 'port (0: any free port)', port, 7337)
    .option('--host <address>', 'address to bind (anything but loopback needs --auth)', '127.0.0.1')
    .option('--auth', 'require an access token on every request (cairn token create)')
    .option('--rate-limit <n>', 'requests a minute per token (0: no limit)', count, 600)
    .option('--erase-key <private.pem>', 'RSA private key that signs erasure certificates; enables erasure over HTTP')
    .option('--quiet', 'no request log on stderr')
    .action(async (o: { port: number; host: string; auth?: boolean; rateLimit: number; eraseKey?: string; quiet?: boolean }, cmd: Command) => {
      const g = cmd.optsWithGlobals() as { db?: string; namespace?: string };
      let eraseKeyPem: string | null = null;
      if (o.eraseKey) {
        try {
          eraseKeyPem = readFileSync(o.eraseKey, 'utf8');
        } catch (err) {
          throw new CairnError('INVALID_INPUT', `cannot read the erase key ${o.eraseKey}: ${(err as Error).message}`, { field: 'erase-key' });
        }
      }
      const opened = await open(g, { longLived: true });
      const stop = stopSignal();
      try {
        const { createHttpApp, listen, isLoopback } = await import('./mcp-http.js');
        if (o.auth && (await opened.access.count()) === 0) {
          throw new CairnError('INVALID_INPUT', 'authentication is on but this store has no tokens', {
            hint: 'create one first: cairn token create --namespace "*" --scope admin',
          });
        }
        const http = createHttpApp({
          engine: opened.engine,
          logger: opened.logger,
          version,
          host: o.host,
          access: o.auth ? opened.access : null,
          rateLimitPerMinute: o.rateLimit,
          eraseKeyPem,
          // An erasure also removes the files next to the database that may hold statements (capture jobs).
          afterErasure: () => void removeCaptureJobs(opened.config.dataDir, { all: true }),
          ...(o.quiet ? {} : { requestLog: (entry) => void process.stderr.write(`${JSON.stringify(entry)}\n`) }),
        });
        const running = await listen(http, o.host, o.port);
        // stdout stays free for whoever runs this; the address goes to stderr as one line.
        process.stderr.write(
          `cairn: serving MCP at ${running.url}/mcp (API at ${running.url}/api, brain page at ${running.url}/; authentication ${o.auth ? 'on' : 'off'}; namespace ${JSON.stringify(opened.config.namespace)}; database ${displayDb(opened.config.dbPath)})\n`,
        );
        if (!isLoopback(o.host)) opened.logger.warn(`listening on ${o.host}: reachable beyond this machine; every request needs a token`);
        if (!stop.signal.aborted) await new Promise((resolve) => stop.signal.addEventListener('abort', resolve, { once: true }));
        process.stderr.write('cairn: stopping: finishing requests in progress\n');
        await running.close();
      } finally {
        stop.dispose();
        await opened.close();
      }
    });
}
