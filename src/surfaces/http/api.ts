import { Hono, type Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { ALL_NAMESPACES, authorize, namespaceAllowed, type AccessControl } from '../../core/access.js';
import type { Engine } from '../../core/engine.js';
import { validateFilter } from '../../core/quarantine.js';
import { jsonTooDeep } from '../../core/text.js';
import { CairnError } from '../../interfaces/errors.js';
import { type FeedbackVerdict, type MemoryInput, type MemoryKind, type SearchResult } from '../../interfaces/memory.js';
import type { QuarantineFilter } from '../../interfaces/quarantine.js';
import type { AccessScope } from '../../interfaces/store.js';
import { clientAddress, CSRF_HEADER, SESSION_COOKIE, SESSION_TTL_MS, type Auth, type AuthEnv, type Principal } from './auth.js';
import { errorResponse, MAX_BODY_BYTES, readBodyText } from './http-errors.js';
import { provenanceQuery, registerFeed } from './feed.js';
import { memoryView } from './views.js';

/**
 * The JSON REST API: what the CLI does, over HTTP, for the brain page and for scripts. Every handler first
 * authorises the principal for the scope it needs in the namespace it touches, and only then reads or
 * writes; a refusal has touched nothing. Calls that name no namespace work in the principal's default.
 */

export interface ApiConfig {
  engine: Engine;
  auth: Auth;
  access: AccessControl | null;
  /** PEM private key that signs erasure certificates; null: erasure over HTTP is off. */
  eraseKeyPem: string | null;
  /** Runs after each erasure (files outside the store). */
  afterErasure: () => void;
  /** Wraps every handler so shutdown can wait for writes in progress. */
  track<T>(fn: () => Promise<T>): Promise<T>;
}

type C = Context<AuthEnv>;

function resultView(r: SearchResult): Record<string, unknown> {
  const relevance = r.scoreDetails.relevance;
  return {
    ...memoryView(r.memory),
    score: r.score,
    ...(relevance === undefined ? {} : { relevance: Math.round(relevance * 10) / 10 }),
    scoreDetails: r.scoreDetails,
    ...(r.stale ? { stale: r.stale } : {}),
  };
}

function principalView(p: Principal, auth: boolean, erase: boolean): Record<string, unknown> {
  return {
    auth,
    erase,
    token: { id: p.token.id, name: p.token.name, scope: p.token.scope, namespaces: p.token.namespaces },
    via: p.via,
    defaultNamespace: p.defaultNamespace,
    ...(p.csrf ? { csrf: p.csrf } : {}),
  };
}

async function body(c: C): Promise<Record<string, unknown>> {
  const type = c.req.header('content-type') ?? '';
  if (!type.includes('application/json')) throw new CairnError('INVALID_INPUT', 'the body must be JSON (Content-Type: application/json)');
  const text = await readBodyText(c, MAX_BODY_BYTES);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CairnError('INVALID_INPUT', 'the body is not valid JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new CairnError('INVALID_INPUT', 'the body must be a JSON object');
  return parsed as Record<string, unknown>;
}

/** An import file may be larger than a JSON body: 64 MiB, about 2,000 memories at the 32 KB maximum. */
const MAX_IMPORT_BYTES = 64 * 1024 * 1024;

/** A body that may be left out (forget, restore, drop, purge): JSON when sent, empty otherwise. */
async function optionalBody(c: C): Promise<Record<string, unknown>> {
  return c.req.header('content-type')?.includes('json') ? body(c) : {};
}

function str(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new CairnError('INVALID_INPUT', `${field}: must be a string`, { field });
  return v;
}

function int(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'number' ? v : /^-?\d+$/u.test(String(v)) ? Number(v) : NaN;
  if (!Number.isInteger(n)) throw new CairnError('INVALID_INPUT', `${field}: must be a whole number`, { field });
  return n;
}

function list(v: unknown, field: string): string[] | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (Array.isArray(v)) {
    if (!v.every((x) => typeof x === 'string')) throw new CairnError('INVALID_INPUT', `${field}: must be strings`, { field });
    return v as string[];
  }
  if (typeof v === 'string') return v.split(',').map((s) => s.trim()).filter(Boolean);
  throw new CairnError('INVALID_INPUT', `${field}: must be a list`, { field });
}

/** Who writes through HTTP, for the memory's provenance: the brain page (a session cookie) or a team token. */
function writerOf(c: C): 'page' | 'http' {
  return getCookie(c, SESSION_COOKIE) ? 'page' : 'http';
}

function idParam(c: C): string {
  return c.req.param('id') ?? '';
}

function queryList(c: C, name: string): string[] | undefined {
  const all = c.req.queries(name);
  if (!all || all.length === 0) return undefined;
  return all.flatMap((v) => v.split(',')).map((s) => s.trim()).filter(Boolean);
}

export function createApi(config: ApiConfig): Hono<AuthEnv> {
  const { engine, auth, access } = config;
  const api = new Hono<AuthEnv>();

  /** The namespace of a call, authorised for `need`, before anything is read or written. */
  const nsFor = (c: C, need: AccessScope, given: unknown): string => {
    const p = c.get('principal');
    const namespace = str(given, 'namespace') ?? p.defaultNamespace;
    authorize(p.token, need, namespace);
    return namespace;
  };
  /** Errors thrown here reach the app's one error boundary (http-errors.ts). */
  const handle =
    (fn: (c: C) => Promise<Response>) =>
    (c: C): Promise<Response> =>
      config.track(() => fn(c));

  // --- unauthenticated: health, login, logout ---------------------------------------------------------
  api.get('/health', (c) => c.json({ ok: true }));

  api.post(
    '/login',
    handle(async (c) => {
      const wait = await auth.limitAddress(clientAddress(c));
      if (wait > 0) {
        c.header('retry-after', String(wait));
        throw new CairnError('RATE_LIMITED', `too many login attempts; retry in ${wait} s`);
      }
      const b = await body(c);
      const token = str(b['token'], 'token');
      if (!token) throw new CairnError('INVALID_INPUT', 'token: required', { field: 'token' });
      const { sessionId, principal } = await auth.login(token.trim());
      setCookie(c, SESSION_COOKIE, sessionId, { httpOnly: true, sameSite: 'Strict', path: '/', maxAge: SESSION_TTL_MS / 1000 });
      return c.json(principalView(principal, true, config.eraseKeyPem !== null));
    }),
  );

  api.post('/logout', async (c) => {
    await auth.logout(getCookie(c, SESSION_COOKIE));
    deleteCookie(c, SESSION_COOKIE, { path: '/' });
    return c.json({ ok: true });
  });

  // --- everything else needs a principal ------------------------------------------------------------------
  // The three routes above answer before this runs, for their exact paths only; any other path, even one
  // ending in /health, is authenticated (and rate limited) here.
  api.use('*', auth.middleware);

  api.get('/session', (c) => c.json(principalView(c.get('principal'), auth.enabled, config.eraseKeyPem !== null)));

  registerFeed(api, engine, nsFor);

  api.get(
    '/namespaces',
    handle(async (c) => {
      const p = c.get('principal');
      const stats = await engine.stats();
      const visible = stats.namespaces.filter((n) => namespaceAllowed(p.token, n.namespace));
      // A token's own namespaces appear even before they hold anything.
      for (const ns of p.token.namespaces)
        if (ns !== ALL_NAMESPACES && !visible.some((n) => n.namespace === ns)) visible.push({ namespace: ns, live: 0, forgotten: 0, superseded: 0, expired: 0 });
      visible.sort((a, b) => a.namespace.localeCompare(b.namespace));
      return c.json({ namespaces: visible, defaultNamespace: p.defaultNamespace });
    }),
  );

  api.get(
    '/memories',
    handle(async (c) => {
      const q = c.req.query();
      const namespace = nsFor(c, 'read', q['namespace']);
      const memories = await engine.list({
        namespace,
        ...(queryList(c, 'kind') ? { kinds: queryList(c, 'kind') as MemoryKind[] } : {}),
        ...(queryList(c, 'tag') ? { tags: queryList(c, 'tag') as string[] } : {}),
        ...(q['from'] ? { from: q['from'] } : {}),
        ...(q['to'] ? { to: q['to'] } : {}),
        ...(q['before'] ? { before: q['before'] } : {}),
        provenance: provenanceQuery(c),
        limit: int(q['limit'], 'limit') ?? 50,
        includeInactive: q['inactive'] === '1' || q['inactive'] === 'true',
      });
      return c.json({ namespace, memories: memories.map(memoryView) });
    }),
  );

  const input = (c: C, b: Record<string, unknown>, namespace: string): MemoryInput => {
    const text = b['text'];
    if (typeof text !== 'string') throw new CairnError('INVALID_INPUT', 'text: required, a string', { field: 'text' });
    const out: MemoryInput = { text, namespace, metadata: { source: writerOf(c), origin: 'user' } };
    const kind = str(b['kind'], 'kind');
    if (kind) out.kind = kind as MemoryKind;
    const importance = int(b['importance'], 'importance');
    if (importance !== undefined) out.importance = importance;
    const tags = list(b['tags'], 'tags');
    if (tags) out.tags = tags;
    const taskId = str(b['taskId'], 'taskId');
    if (taskId) out.taskId = taskId;
    const expiresAt = str(b['expiresAt'], 'expiresAt');
    if (expiresAt) out.expiresAt = expiresAt;
    // Shapes are checked by the engine's validation (validateAnchors, validateScope).
    if (b['anchors'] !== undefined) out.anchors = b['anchors'] as MemoryInput['anchors'];
    if (b['scope'] !== undefined) out.scope = b['scope'] as MemoryInput['scope'];
    return out;
  };

  api.post(
    '/memories',
    handle(async (c) => {
      const b = await body(c);
      const namespace = nsFor(c, 'write', b['namespace']);
      const supersedes = str(b['supersedes'], 'supersedes');
      const r = supersedes ? await engine.supersede(supersedes, input(c, b, namespace)) : await engine.save(input(c, b, namespace));
      return c.json({ id: r.id, duplicate: r.duplicate, memory: memoryView(r.memory), likelyReplaces: r.likelyReplaces ?? [] }, r.duplicate ? 200 : 201);
    }),
  );

  api.get(
    '/memories/:id',
    handle(async (c) => {
      const namespace = nsFor(c, 'read', c.req.query('namespace'));
      const id = idParam(c);
      const memory = await engine.get(id, { namespace });
      if (!memory) throw new CairnError('NOT_FOUND', `no memory with id ${JSON.stringify(id)} in ${JSON.stringify(namespace)}`, { field: 'id' });
      const history = await engine.history(id, { namespace });
      return c.json({ memory: memoryView(memory), history: history.map(memoryView) });
    }),
  );

  api.post(
    '/memories/:id/replace',
    handle(async (c) => {
      const b = await body(c);
      const namespace = nsFor(c, 'write', b['namespace'] ?? c.req.query('namespace'));
      const id = idParam(c);
      // The engine keeps the old note's kind, importance, tags and task unless the body gives them.
      const r = await engine.supersede(id, input(c, b, namespace));
      return c.json({ id: r.id, duplicate: r.duplicate, memory: memoryView(r.memory), replaced: id }, 201);
    }),
  );

  api.patch(
    '/memories/:id',
    handle(async (c) => {
      const b = await body(c);
      const namespace = nsFor(c, 'write', b['namespace'] ?? c.req.query('namespace'));
      const patch: Record<string, unknown> = {};
      for (const k of ['text', 'kind', 'importance', 'tags', 'expiresAt'] as const) if (b[k] !== undefined) patch[k] = b[k];
      const m = await engine.update(idParam(c), patch, { namespace });
      return c.json({ memory: memoryView(m) });
    }),
  );

  api.post(
    '/memories/:id/forget',
    handle(async (c) => {
      const b = await optionalBody(c);
      const namespace = nsFor(c, 'write', b['namespace'] ?? c.req.query('namespace'));
      const reason = str(b['reason'], 'reason');
      const m = await engine.forget(idParam(c), { namespace, ...(reason ? { reason } : {}) });
      return c.json({ memory: memoryView(m) });
    }),
  );

  api.post(
    '/memories/:id/follow-moves',
    handle(async (c) => {
      const b = await optionalBody(c);
      const namespace = nsFor(c, 'write', b['namespace'] ?? c.req.query('namespace'));
      const r = await engine.followMoves(idParam(c), { namespace, metadata: { source: 'http', origin: 'user' } });
      return c.json({ memory: memoryView(r.memory), moved: r.moved, replaced: r.supersedes }, r.supersedes ? 201 : 200);
    }),
  );

  api.post(
    '/memories/:id/feedback',
    handle(async (c) => {
      const b = await body(c);
      const namespace = nsFor(c, 'write', b['namespace'] ?? c.req.query('namespace'));
      const m = await engine.rate(idParam(c), b['verdict'] as FeedbackVerdict, { namespace });
      return c.json({ memory: memoryView(m) });
    }),
  );

  api.get(
    '/review',
    handle(async (c) => {
      const namespace = nsFor(c, 'read', c.req.query('namespace'));
      const memories = await engine.reviewList({ namespace, limit: int(c.req.query('limit'), 'limit') ?? 50 });
      return c.json({ namespace, memories: memories.map(memoryView) });
    }),
  );

  api.post(
    '/memories/:id/restore',
    handle(async (c) => {
      const b = await optionalBody(c);
      const namespace = nsFor(c, 'write', b['namespace'] ?? c.req.query('namespace'));
      const m = await engine.restore(idParam(c), { namespace });
      return c.json({ memory: memoryView(m) });
    }),
  );

  api.get(
    '/search',
    handle(async (c) => {
      const q = c.req.query();
      const namespace = nsFor(c, 'read', q['namespace']);
      const query = q['q'] ?? '';
      const results = await engine.search(query, {
        namespace,
        limit: int(q['limit'], 'limit') ?? 10,
        // A reviewer's search in the page (count=0) is not an agent's recall.
        countRecall: q['count'] !== '0',
        ...(queryList(c, 'kind') ? { kinds: queryList(c, 'kind') as MemoryKind[] } : {}),
        ...(queryList(c, 'tag') ? { tags: queryList(c, 'tag') as string[] } : {}),
      });
      return c.json({ namespace, results: results.map(resultView) });
    }),
  );

  api.post(
    '/context',
    handle(async (c) => {
      const b = await body(c);
      const namespace = nsFor(c, 'read', b['namespace']);
      const query = str(b['query'], 'query') ?? '';
      const budget = int(b['tokenBudget'], 'tokenBudget');
      const limit = int(b['limit'], 'limit');
      const pack = await engine.context(query, { namespace, ...(budget !== undefined ? { tokenBudget: budget } : {}), ...(limit !== undefined ? { limit } : {}) });
      return c.json({ namespace, ...pack });
    }),
  );

  api.get(
    '/routes',
    handle(async (c) => {
      const namespace = nsFor(c, 'read', c.req.query('namespace'));
      const q = c.req.query('q');
      if (q) {
        const results = await engine.search(q, { namespace, kinds: ['route'], limit: int(c.req.query('limit'), 'limit') ?? 20 });
        return c.json({ namespace, routes: results.map(resultView) });
      }
      const routes = await engine.list({ namespace, kinds: ['route'], limit: int(c.req.query('limit'), 'limit') ?? 200 });
      return c.json({ namespace, routes: routes.map(memoryView) });
    }),
  );

  api.post(
    '/routes',
    handle(async (c) => {
      const b = await body(c);
      const namespace = nsFor(c, 'write', b['namespace']);
      const route = { title: str(b['title'], 'title') ?? '', description: str(b['description'], 'description') ?? '', paths: list(b['paths'], 'paths') ?? [] };
      const r = await engine.saveRoute(route, { namespace, metadata: { source: writerOf(c), origin: 'user' } });
      return c.json({ id: r.id, duplicate: r.duplicate, memory: memoryView(r.memory) }, r.duplicate ? 200 : 201);
    }),
  );

  api.get(
    '/export',
    handle(async (c) => {
      const namespace = nsFor(c, 'read', c.req.query('namespace'));
      const lines: string[] = [];
      for await (const line of engine.exportLines({ namespace, includeInactive: c.req.query('all') === '1' })) lines.push(line);
      return c.body(lines.length ? `${lines.join('\n')}\n` : '', 200, { 'content-type': 'application/x-ndjson; charset=utf-8' });
    }),
  );

  api.post(
    '/import',
    handle(async (c) => {
      const p = c.get('principal');
      const fallback = nsFor(c, 'write', c.req.query('namespace'));
      const text = await readBodyText(c, MAX_IMPORT_BYTES);
      // Every line's namespace is authorised before the first one is written.
      const lines = text.split(/\r?\n/u).map((line) => {
        // Blank, too deep or not JSON: passed on as is, for the engine to reject with its line number.
        if (line.trim() === '' || jsonTooDeep(line)) return line;
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          return line; // the engine reports it with its line number
        }
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return line;
        const o = parsed as Record<string, unknown>;
        const ns = typeof o['namespace'] === 'string' && o['namespace'] !== '' ? o['namespace'] : fallback;
        authorize(p.token, 'write', ns);
        return JSON.stringify({ ...o, namespace: ns });
      });
      const counts = await engine.importLines(lines);
      return c.json(counts);
    }),
  );

  api.get(
    '/stats',
    handle(async (c) => {
      const namespace = nsFor(c, 'read', c.req.query('namespace'));
      const stats = await engine.stats();
      const usage = await engine.usage({ namespace, top: int(c.req.query('top'), 'top') ?? 10 });
      return c.json({ namespace, counts: stats.namespaces.find((n) => n.namespace === namespace) ?? null, ...usage });
    }),
  );

  // --- admin: quarantine, erasure, maintenance, tokens --------------------------------------------------
  const requireAdmin = (c: C, namespace: string | null) => authorize(c.get('principal').token, 'admin', namespace);

  /**
   * The review filter of a quarantine call, from the query or a JSON body. A token for every namespace
   * reviews the whole store; any other admin token only the namespace it names (default: its own).
   */
  const reviewFilter = (c: C, raw: Record<string, unknown>): QuarantineFilter => {
    const p = c.get('principal');
    const filter = validateFilter(raw);
    if (filter.namespace !== undefined) requireAdmin(c, filter.namespace);
    else if (!p.token.namespaces.includes(ALL_NAMESPACES)) {
      requireAdmin(c, p.defaultNamespace);
      filter.namespace = p.defaultNamespace;
    } else requireAdmin(c, null);
    return filter;
  };
  const queryFilter = (c: C) =>
    Object.fromEntries(['status', 'namespace', 'source', 'reason', 'minScore', 'maxScore', 'since', 'until'].map((k) => [k, c.req.query(k)]));

  api.get(
    '/quarantine',
    handle(async (c) => {
      const limit = int(c.req.query('limit'), 'limit') ?? 100;
      return c.json(await engine.reviewQuarantine(reviewFilter(c, queryFilter(c)), { limit }));
    }),
  );

  api.post(
    '/quarantine/bulk',
    handle(async (c) => {
      const b = await body(c);
      const action = str(b['action'], 'action');
      if (action !== 'release' && action !== 'drop') throw new CairnError('INVALID_INPUT', 'action: must be release or drop', { field: 'action' });
      const filter = reviewFilter(c, { ...((b['filter'] as Record<string, unknown> | undefined) ?? {}), ...(b['ids'] === undefined ? {} : { ids: b['ids'] }) });
      const reason = str(b['reason'], 'reason');
      return c.json(
        await engine.decideQuarantined(action, filter, {
          ...(reason === undefined ? {} : { reason }),
          dryRun: b['dryRun'] === true,
          ...(b['teach'] === false ? { teach: false } : {}),
        }),
      );
    }),
  );

  api.get(
    '/quarantine/:id',
    handle(async (c) => {
      const entry = await quarantineEntry(c);
      // The full text only on an explicit reveal, which the log records (who, never the text).
      if (c.req.query('reveal') !== '1') return c.json({ entry });
      const p = c.get('principal');
      return c.json({ entry: await engine.getQuarantined(entry.id, { reveal: true, by: p.token.name ?? p.token.id }) });
    }),
  );

  api.post(
    '/memories/:id/poison',
    handle(async (c) => {
      const b = await optionalBody(c);
      const namespace = str(b['namespace'], 'namespace') ?? c.get('principal').defaultNamespace;
      requireAdmin(c, namespace);
      const reason = str(b['reason'], 'reason');
      const memory = await engine.markPoisoned(idParam(c), { namespace, ...(reason === undefined ? {} : { reason }), ...(b['teach'] === false ? { teach: false } : {}) });
      return c.json({ memory });
    }),
  );

  const quarantineEntry = async (c: C) => {
    const id = idParam(c);
    const entry = await engine.getQuarantined(id);
    if (!entry || !namespaceAllowed(c.get('principal').token, entry.namespace)) {
      // A token that cannot see the entry learns nothing about it; without admin it is refused first.
      requireAdmin(c, c.get('principal').defaultNamespace);
      throw new CairnError('NOT_FOUND', `no quarantine entry ${JSON.stringify(id)}`, { field: 'id' });
    }
    requireAdmin(c, entry.namespace);
    return entry;
  };

  api.post(
    '/quarantine/:id/release',
    handle(async (c) => {
      const entry = await quarantineEntry(c);
      const b = await body(c);
      const r = await engine.releaseQuarantined(entry.id, { reason: str(b['reason'], 'reason') ?? '' });
      return c.json(r);
    }),
  );

  api.post(
    '/quarantine/:id/drop',
    handle(async (c) => {
      const entry = await quarantineEntry(c);
      const b = await optionalBody(c);
      const reason = str(b['reason'], 'reason');
      return c.json({ entry: await engine.dropQuarantined(entry.id, { ...(reason ? { reason } : {}), ...(b['teach'] === false ? { teach: false } : {}) }) });
    }),
  );

  api.post(
    '/erase',
    handle(async (c) => {
      const b = await body(c);
      const namespace = str(b['namespace'], 'namespace');
      const subject = str(b['subject'], 'subject');
      if ((namespace === undefined) === (subject === undefined)) throw new CairnError('INVALID_INPUT', 'give exactly one of namespace or subject', { field: 'namespace' });
      // A subject can appear in any namespace: only a token for every namespace may erase one.
      requireAdmin(c, namespace ?? null);
      if (!config.eraseKeyPem) throw new CairnError('UNSUPPORTED', 'erasure is off on this server', { hint: 'start it with cairn serve --erase-key <private.pem>' });
      const certificate = await engine.erase(namespace ? { namespace } : { subject: subject as string }, config.eraseKeyPem);
      config.afterErasure();
      return c.json({ certificate });
    }),
  );

  api.post(
    '/purge-expired',
    handle(async (c) => {
      const b = await optionalBody(c);
      const namespace = str(b['namespace'], 'namespace') ?? c.get('principal').defaultNamespace;
      requireAdmin(c, namespace);
      return c.json({ purged: await engine.purgeExpired({ namespace }) });
    }),
  );

  const tokens = () => {
    if (!access) throw new CairnError('UNSUPPORTED', 'authentication is off on this server: there are no tokens to manage', { hint: 'start it with cairn serve --auth' });
    return access;
  };
  api.get(
    '/tokens',
    handle(async (c) => {
      requireAdmin(c, null);
      return c.json({ tokens: await tokens().list() });
    }),
  );
  api.post(
    '/tokens',
    handle(async (c) => {
      requireAdmin(c, null);
      const b = await body(c);
      const created = await tokens().create({
        namespaces: list(b['namespaces'] ?? b['namespace'], 'namespaces') ?? [],
        scope: str(b['scope'], 'scope') ?? '',
        expires: str(b['expires'], 'expires'),
        name: str(b['name'], 'name'),
      });
      return c.json({ token: created.token, ...created.record }, 201);
    }),
  );
  api.delete(
    '/tokens/:id',
    handle(async (c) => {
      requireAdmin(c, null);
      await tokens().revoke(idParam(c));
      return c.json({ revoked: idParam(c) });
    }),
  );

  api.notFound((c) => errorResponse(c, new CairnError('NOT_FOUND', `no API route ${c.req.method} ${c.req.path}`)));
  return api;
}

export { CSRF_HEADER };
