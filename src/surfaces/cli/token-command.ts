import type { Command } from 'commander';
import type { TokenView } from '../../core/access.js';
import { CairnError } from '../../interfaces/errors.js';
import type { OpenEngineFn } from '../mcp/mcp-commands.js';

interface Io {
  stdout: NodeJS.WritableStream;
}

function line(t: TokenView): string {
  const expires = t.expiresAt ? `expires ${t.expiresAt.slice(0, 16)}` : 'no expiry';
  const used = t.lastUsedAt ? `used ${t.lastUsedAt.slice(0, 16)}` : 'never used';
  return `${t.id}  ${t.status.padEnd(7)}  ${t.scope.padEnd(5)}  ${t.namespaces.join(',')}  ${expires}  ${used}${t.name ? `  ${JSON.stringify(t.name)}` : ''}`;
}

/**
 * `cairn token create|list|revoke`: access tokens for `cairn serve --auth`. The secret is printed once, at
 * creation; the store keeps its SHA-256 only. `create --json` prints `{ "token": … }` plus the record.
 */
export function registerTokenCommands(program: Command, io: Io, open: OpenEngineFn): void {
  const out = (s: string): void => void io.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
  const token = program.command('token').description('access tokens for the HTTP server (cairn serve --auth): create, list, revoke');
  const sub = (name: string, description: string) => token.command(name).description(description).option('--db <path>', 'database file').option('--json', 'print JSON');

  async function withAccess<T>(cmd: Command, fn: (access: import('../../core/access.js').AccessControl, json: boolean) => Promise<T>): Promise<T> {
    const g = cmd.optsWithGlobals() as { db?: string; json?: boolean };
    const opened = await open({ ...(g.db ? { db: g.db } : {}) }, { withoutEmbedder: true });
    try {
      return await fn(opened.access, Boolean(g.json));
    } finally {
      await opened.close();
    }
  }

  sub('create', 'create a token for --namespace <ns[,ns…]|*> (the namespaces it reaches); its secret is shown once')
    .requiredOption('--scope <scope>', 'read, write or admin')
    .option('--expires <when>', 'a duration (30d, 12h, 2w) or an ISO date; default: no expiry')
    .option('--name <name>', 'a label (who or what uses it)')
    .action(async (o: { scope: string; expires?: string; name?: string }, cmd: Command) => {
      // --namespace is the program's global option (commander hands it to the program, not to this command).
      const given = (cmd.optsWithGlobals() as { namespace?: string }).namespace;
      if (!given) throw new CairnError('INVALID_INPUT', 'token create: --namespace <ns|*> is required (comma-separate several)', { field: 'namespace' });
      await withAccess(cmd, async (access, json) => {
        const namespaces = given.split(',').map((n) => n.trim()).filter(Boolean);
        const created = await access.create({ namespaces, scope: o.scope, expires: o.expires, name: o.name });
        if (json) return out(JSON.stringify({ token: created.token, ...created.record }, null, 2));
        out(created.token);
        process.stderr.write(`created ${line(created.record)}\nthe token above is shown once: store it now (agents send it as "Authorization: Bearer <token>")\n`);
      });
    });

  sub('list', 'list tokens (never their secrets)').action(async (_o: unknown, cmd: Command) => {
    await withAccess(cmd, async (access, json) => {
      const tokens = await access.list();
      if (json) return out(JSON.stringify({ tokens }, null, 2));
      if (tokens.length === 0) return out('no tokens (cairn token create --namespace <ns> --scope read|write|admin)');
      for (const t of tokens) out(line(t));
    });
  });

  sub('revoke', 'revoke a token by its id (tok_…); requests with it fail from then on')
    .argument('<id>', 'token id')
    .action(async (id: string, _o: unknown, cmd: Command) => {
      await withAccess(cmd, async (access, json) => {
        await access.revoke(id);
        out(json ? JSON.stringify({ revoked: id }) : `revoked ${id}`);
      });
    });
}
