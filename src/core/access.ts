import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { CairnError } from '../interfaces/errors.js';
import type { AccessScope, AccessTokenRecord, Store } from '../interfaces/store.js';
import { validateNamespace } from './validate.js';

/**
 * Access tokens of the HTTP server. A token reaches some namespaces (or every one, `*`) with one scope:
 * `read` (search, list, get, context, export), `write` (also save, replace, forget, restore, routes,
 * import) or `admin` (also the quarantine queue, erasure and token-free maintenance such as purging).
 * The secret is shown once at creation; the store keeps its SHA-256 only.
 */

export const SCOPES: readonly AccessScope[] = ['read', 'write', 'admin'];
const RANK: Record<AccessScope, number> = { read: 1, write: 2, admin: 3 };
export const ALL_NAMESPACES = '*';
const PREFIX = 'cairn_';

export function isScope(value: unknown): value is AccessScope {
  return typeof value === 'string' && (SCOPES as readonly string[]).includes(value);
}

/** True when a token of scope `have` may do what needs `need`. */
export function scopeAllows(have: AccessScope, need: AccessScope): boolean {
  return RANK[have] >= RANK[need];
}

export function namespaceAllowed(token: Pick<AccessTokenRecord, 'namespaces'>, namespace: string): boolean {
  return token.namespaces.includes(ALL_NAMESPACES) || token.namespaces.includes(namespace);
}

/** Where a call that names no namespace works: the token's first namespace, or the server's for a `*` token. */
export function tokenDefaultNamespace(token: Pick<AccessTokenRecord, 'namespaces'>, serverDefault: string): string {
  return token.namespaces.includes(ALL_NAMESPACES) ? serverDefault : (token.namespaces[0] ?? serverDefault);
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** `30d`, `12h`, `90m`, `2w` or an ISO 8601 instant → ISO instant; null for no expiry. */
export function parseExpiry(value: string | undefined, now: Date): string | null {
  if (value === undefined || value === '' || value === 'never') return null;
  const m = /^(\d{1,6})\s*([mhdw])$/u.exec(value.trim());
  if (m) {
    const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[m[2] as 'm' | 'h' | 'd' | 'w'];
    const n = Number(m[1]);
    if (n <= 0) throw new CairnError('INVALID_INPUT', `expires: must be a positive duration (got ${JSON.stringify(value)})`, { field: 'expires' });
    return new Date(now.getTime() + n * unit).toISOString();
  }
  const t = Date.parse(value);
  if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}/u.test(value.trim()))
    throw new CairnError('INVALID_INPUT', `expires: use a duration such as 30d, 12h, 2w, or an ISO date (got ${JSON.stringify(value)})`, { field: 'expires' });
  if (t <= now.getTime()) throw new CairnError('INVALID_INPUT', `expires: ${value} is in the past`, { field: 'expires' });
  return new Date(t).toISOString();
}

/** What `token list` and the API show: everything but the hash. */
export type TokenView = Omit<AccessTokenRecord, 'hash'> & { status: 'active' | 'expired' | 'revoked' };

export function tokenStatus(t: AccessTokenRecord, now: string): TokenView['status'] {
  if (t.revokedAt) return 'revoked';
  if (t.expiresAt && t.expiresAt <= now) return 'expired';
  return 'active';
}

export function viewToken(t: AccessTokenRecord, now: string): TokenView {
  const { hash: _hash, ...rest } = t;
  return { ...rest, status: tokenStatus(t, now) };
}

export interface CreateTokenInput {
  namespaces: string[];
  scope: string;
  expires?: string | undefined;
  name?: string | undefined;
}

export class AccessControl {
  private readonly store: Store;
  private readonly now: () => Date;
  /** Last-used times are written at most once a minute per token. */
  private readonly touched = new Map<string, number>();

  constructor(options: { store: Store; now?: () => Date }) {
    this.store = options.store;
    this.now = options.now ?? (() => new Date());
  }

  /** Creates a token; the returned secret is the only copy. */
  async create(input: CreateTokenInput): Promise<{ token: string; record: TokenView }> {
    if (!isScope(input.scope)) throw new CairnError('INVALID_INPUT', `scope: must be one of ${SCOPES.join(', ')} (got ${JSON.stringify(input.scope)})`, { field: 'scope' });
    if (input.namespaces.length === 0) throw new CairnError('INVALID_INPUT', 'namespace: give at least one namespace, or * for all', { field: 'namespace' });
    const namespaces = [...new Set(input.namespaces.map((n) => (n === ALL_NAMESPACES ? n : validateNamespace(n, 'namespace'))))];
    if (input.name !== undefined && (input.name.length > 100 || /[\u0000-\u001f]/u.test(input.name)))
      throw new CairnError('INVALID_INPUT', 'name: at most 100 printable characters', { field: 'name' });
    const now = this.now();
    const expiresAt = parseExpiry(input.expires, now);
    const id = `tok_${randomBytes(6).toString('hex')}`;
    const token = `${PREFIX}${randomBytes(32).toString('base64url')}`;
    const record: AccessTokenRecord = {
      id,
      hash: hashSecret(token),
      name: input.name ?? null,
      namespaces: namespaces.includes(ALL_NAMESPACES) ? [ALL_NAMESPACES] : namespaces,
      scope: input.scope,
      createdAt: now.toISOString(),
      expiresAt,
      revokedAt: null,
      lastUsedAt: null,
    };
    await this.store.putToken(record);
    return { token, record: viewToken(record, now.toISOString()) };
  }

  async list(): Promise<TokenView[]> {
    const now = this.now().toISOString();
    return (await this.store.listTokens()).map((t) => viewToken(t, now));
  }

  async revoke(id: string): Promise<void> {
    if (!(await this.store.revokeToken(id, this.now().toISOString()))) throw new CairnError('NOT_FOUND', `no token with id ${JSON.stringify(id)}`, { field: 'id' });
  }

  async count(): Promise<number> {
    return (await this.store.listTokens()).length;
  }

  /** The token a secret belongs to, when it is active; UNAUTHORIZED otherwise. */
  async authenticate(secret: string | undefined): Promise<AccessTokenRecord> {
    if (!secret) throw denied('missing access token');
    if (!secret.startsWith(PREFIX) || secret.length > 200) throw denied('invalid access token');
    return this.authenticateHash(hashSecret(secret));
  }

  /** As `authenticate`, for a session that kept the token's hash (re-checked on every request). */
  async authenticateHash(hash: string): Promise<AccessTokenRecord> {
    const record = /^[0-9a-f]{64}$/u.test(hash) ? await this.store.getTokenByHash(hash) : null;
    // The lookup is by hash; the constant-time compare guards against a store that matched loosely.
    if (!record || !timingSafeEqual(Buffer.from(record.hash, 'hex'), Buffer.from(hash, 'hex'))) throw denied('invalid access token');
    const now = this.now();
    const status = tokenStatus(record, now.toISOString());
    if (status !== 'active') throw denied(`access token ${status}`);
    const last = this.touched.get(record.id) ?? 0;
    if (now.getTime() - last > 60_000) {
      this.touched.set(record.id, now.getTime());
      await this.store.touchToken(record.id, now.toISOString()).catch(() => {});
    }
    return record;
  }
}

function denied(why: string): CairnError {
  return new CairnError('UNAUTHORIZED', why, { hint: 'send Authorization: Bearer <token> (cairn token create)' });
}

/** Throws FORBIDDEN unless `token` may do `need` in `namespace` (null: an operation on no one namespace). */
export function authorize(token: Pick<AccessTokenRecord, 'namespaces' | 'scope' | 'id'>, need: AccessScope, namespace: string | null): void {
  if (!scopeAllows(token.scope, need)) throw new CairnError('FORBIDDEN', `token ${token.id} has scope ${token.scope}; this needs ${need}`);
  if (namespace === null) {
    if (!token.namespaces.includes(ALL_NAMESPACES)) throw new CairnError('FORBIDDEN', `token ${token.id} is limited to namespaces; this needs a token for *`);
    return;
  }
  if (!namespaceAllowed(token, namespace)) throw new CairnError('FORBIDDEN', `token ${token.id} does not reach namespace ${JSON.stringify(namespace)}`);
}
