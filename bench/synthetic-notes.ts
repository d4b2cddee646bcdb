/**
 * A deterministic corpus of coding-project notes (decisions, constraints, conventions, gotchas, facts, notes)
 * and the questions an agent asks about them, shared by the latency and HTTP benchmarks.
 */
import type { Embedder } from '../src/interfaces/embedder.js';
import type { MemoryInput, MemoryKind } from '../src/interfaces/memory.js';

// ------------------------------------------------------------------------------------------ text generation

/** Deterministic PRNG (mulberry32) so every run stores the same corpus. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const AREAS = [
  'checkout', 'billing', 'auth', 'session handling', 'search indexing', 'the import pipeline', 'rate limiting', 'email delivery',
  'the admin dashboard', 'feature flags', 'the job queue', 'response caching', 'structured logging', 'metrics export', 'the CLI',
  'schema migrations', 'file uploads', 'push notifications', 'inbound webhooks', 'onboarding', 'SSO login', 'inventory sync',
  'tax calculation', 'PDF export', 'localisation', 'the mobile API', 'the GraphQL gateway', 'the cron scheduler', 'the audit log',
  'permissions', 'refunds', 'subscription renewals', 'the data warehouse sync', 'image resizing', 'the websocket relay',
  'password reset', 'the pricing engine', 'shipping labels', 'the recommendation service', 'invoice numbering', 'CSV export',
  'the public REST API', 'the design system', 'server-side rendering', 'the build pipeline', 'end-to-end tests', 'the plugin loader',
];
const LIBS = [
  'Postgres', 'Redis', 'Kafka', 'SQLite', 'Prisma', 'Drizzle', 'Kysely', 'zod', 'Hono', 'Express', 'Fastify', 'Next.js', 'Vite',
  'esbuild', 'Vitest', 'Jest', 'Playwright', 'pnpm workspaces', 'Docker Compose', 'Terraform', 'OpenTelemetry', 'Sentry', 'Stripe',
  'S3', 'CloudFront', 'BullMQ', 'pg-boss', 'jose', 'argon2', 'bcrypt', 'date-fns', 'Luxon', 'tRPC', 'TanStack Query', 'Tailwind',
  'pino', 'winston', 'undici', 'axios', 'ioredis', 'Knex', 'TypeORM', 'Temporal', 'NATS', 'RabbitMQ', 'ClickHouse', 'DuckDB',
  'Meilisearch', 'Elasticsearch', 'sharp', 'Puppeteer', 'msw', 'nock', 'Turborepo', 'Nx', 'Biome', 'ESLint', 'Prettier',
];
const PURPOSES = [
  'retries', 'background jobs', 'schema validation', 'token signing', 'password hashing', 'request tracing', 'error reporting',
  'HTTP calls', 'queueing', 'date arithmetic', 'connection pooling', 'full-text search', 'test fixtures', 'HTTP mocking',
  'image processing', 'server routing', 'monorepo builds', 'linting', 'formatting', 'query building', 'event streaming',
  'session storage', 'idempotency keys', 'distributed locks', 'feature toggles', 'CDN invalidation', 'PDF rendering',
];
const REASONS = [
  'the old client leaked connections under load', 'p95 latency doubled after the last upgrade', 'it keeps the bundle under 200 KB',
  'legal requires EU data residency', 'the vendor deprecated the v1 endpoint', 'it supports cancellation through AbortSignal',
  'the previous library had no ESM build', 'we hit the 10k requests per minute quota', 'it runs on Node 20 without native addons',
  'the team already operates it in production', 'cold starts dropped from 900 ms to 150 ms', 'it handles DST transitions correctly',
  'the migration tool locked tables for minutes', 'memory grew by 40 MB per hour with the old one', 'it has typed query results',
  'CI time went from 14 to 6 minutes', 'it retries with jitter out of the box', 'the security review flagged the old dependency',
  'it streams rows instead of buffering them', 'flaky tests disappeared once timers were faked',
];
const CONSTRAINTS = [
  'stay idempotent because the provider redelivers events', 'never log card numbers or CVV codes', 'finish within 30 seconds',
  'keep backwards compatibility with v1 mobile clients', 'not block the event loop for more than 50 ms', 'run inside a transaction',
  'use UTC everywhere and convert only in the UI', 'return 429 with a Retry-After header', 'validate input with the shared zod schema',
  'read secrets from the vault, never from .env files in production', 'stay below 512 MB of memory in the worker container',
  'be behind the PAYMENTS_V2_ENABLED flag until the rollout ends', 'emit an audit event for every permission change',
  'paginate with cursors, not offsets', 'treat amounts as integer cents', 'not call the external API from request handlers',
];
const CONDITIONS = [
  'the cart holds more than 100 items', 'two workers pick the same job', 'the locale is tr-TR', 'a webhook arrives twice',
  'the token expires mid-request', 'the CSV has a BOM', 'the user has no email address', 'Redis fails over', 'the clock skews by 5 s',
  'the upload exceeds 25 MB', 'a migration runs during a deploy', 'the tenant id is missing', 'the invoice total is zero',
  'the queue backs up past 10k jobs', 'the tab stays open overnight', 'the feature flag service times out',
];
const OUTCOMES = [
  'all 412 tests pass', 'the snapshot for the invoice view changed', 'two integration tests time out on CI only',
  'the type errors in the generated client are gone', 'the migration is reversible', 'the bundle shrank by 18 KB',
  'staging needs a manual cache purge afterwards', 'lint reports unused exports in the legacy folder',
];
const COMMANDS = [
  'pnpm test --filter api', 'make migrate', 'npx prisma generate', 'docker compose up db redis', 'npm run typecheck',
  'go test ./...', 'cargo clippy --all-targets', 'pytest -k billing', 'terraform plan -var-file=staging.tfvars', 'npm run e2e -- --headed',
  'pnpm db:seed', 'just lint', 'bazel test //services/...', 'npx playwright install chromium',
];
const TOP = ['src', 'packages/api/src', 'apps/web/src', 'services', 'lib', 'internal', 'cmd', 'app', 'server', 'workers'];
const MODULES = [
  'billing', 'auth', 'checkout', 'inventory', 'search', 'notifications', 'webhooks', 'payments', 'users', 'orders', 'reports',
  'shipping', 'tax', 'admin', 'jobs', 'cache', 'config', 'telemetry', 'uploads', 'pricing', 'sessions', 'tenants', 'exports',
];
const FILES = ['handler', 'service', 'repository', 'client', 'schema', 'router', 'worker', 'middleware', 'config', 'utils', 'types', 'retry', 'queue', 'mapper', 'policy', 'store'];
const EXTS = ['.ts', '.ts', '.ts', '.tsx', '.py', '.go', '.rs', '.sql', '.yaml'];
const VERBS = ['get', 'compute', 'retry', 'sync', 'load', 'validate', 'normalize', 'resolve', 'apply', 'build', 'parse', 'enqueue', 'flush', 'refresh', 'reconcile'];
const NOUNS = ['User', 'Invoice', 'Cart', 'Order', 'Token', 'Session', 'Webhook', 'TaxTotal', 'Stock', 'Price', 'Tenant', 'Refund', 'Upload', 'Report', 'Quota', 'Label'];
const CONSTS = ['MAX_RETRY_ATTEMPTS', 'PAYMENTS_V2_ENABLED', 'SESSION_TTL_SECONDS', 'DEFAULT_PAGE_SIZE', 'WEBHOOK_SECRET', 'RATE_LIMIT_RPM', 'CACHE_TTL_MS', 'S3_BUCKET_EXPORTS', 'FEATURE_NEW_CHECKOUT', 'DB_POOL_SIZE', 'JOB_CONCURRENCY', 'TAX_ROUNDING_MODE'];
const ERRS = ['ERR_STOCK_DRIFT', 'ERR_TOKEN_REPLAY', 'ERR_TAX_ROUNDING', 'ERR_QUOTA_EXCEEDED', 'ERR_WEBHOOK_SIGNATURE', 'ERR_LOCK_TIMEOUT', 'ERR_INVOICE_GAP', 'ERR_UPLOAD_TRUNCATED'];
const PEOPLE = ['dana', 'omar', 'li', 'priya', 'sam', 'jonas', 'amara', 'kenji', 'lucia', 'felix', 'noor', 'tomas'];
const TICKETS = ['PAY', 'AUTH', 'OPS', 'WEB', 'API', 'INFRA', 'DATA', 'MOB'];
const CONVENTIONS = [
  'repository functions return null when nothing is found and never throw NOT_FOUND', 'React components live one per file with a co-located test',
  'feature flags are read through the flags client, never from env directly', 'every SQL migration has a matching down migration',
  'errors crossing a service boundary are mapped to problem+json', 'background jobs carry a correlation id from the originating request',
  'money is formatted only in the presentation layer', 'public functions get JSDoc that states what happens on nothing found',
];
const GOTCHAS = [
  'silently truncates the payload', 'returns stale data for up to a minute', 'double-counts the discount', 'deadlocks with the nightly export',
  'drops the last row', 'swallows the original error', 'retries non-idempotent requests', 'uses local time instead of UTC',
  'reads the whole file into memory', 'leaks a database connection',
];
const FIXES = [
  'fixed by taking a row lock first', 'fixed by passing the tenant id explicitly', 'workaround: pin the library to the previous minor',
  'fixed by streaming the response', 'fixed by moving the call into the outbox worker', 'fixed by normalising to NFC before comparing',
  'workaround: raise the timeout until the vendor patch ships', 'fixed by deduplicating on the event id',
];

export type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function path(r: Rand): string {
  return `${pick(r, TOP)}/${pick(r, MODULES)}/${pick(r, FILES)}${pick(r, EXTS)}`;
}
function ident(r: Rand): string {
  return `${pick(r, VERBS)}${pick(r, NOUNS)}${r() < 0.3 ? pick(r, ['ById', 'Batch', 'Async', 'V2', 'Safe']) : ''}`;
}
function errCode(r: Rand): string {
  return `${pick(r, ERRS)}_${Math.floor(r() * 90) + 10}`;
}

/** One coding-project note: a decision, constraint, convention, gotcha, fact or plain note. */
export function coreNote(r: Rand): { text: string; kind: MemoryKind; tags: string[] } {
  const mod = pick(r, MODULES);
  switch (Math.floor(r() * 6)) {
    case 0:
      return {
        kind: 'decision',
        tags: [mod, 'decision'],
        text: `${cap(pick(r, AREAS))}: we use ${pick(r, LIBS)} instead of ${pick(r, LIBS)} for ${pick(r, PURPOSES)} because ${pick(r, REASONS)}. The wrapper lives in ${path(r)}.`,
      };
    case 1:
      return {
        kind: 'constraint',
        tags: [mod],
        text: `${cap(pick(r, AREAS))} must ${pick(r, CONSTRAINTS)}; ${ident(r)}() in ${path(r)} enforces it.`,
      };
    case 2:
      return { kind: 'convention', tags: [mod, 'style'], text: `Convention: ${pick(r, CONVENTIONS)}, e.g. ${ident(r)} in ${path(r)}.` };
    case 3:
      return {
        kind: 'gotcha',
        tags: [mod, 'bug'],
        text: `${ident(r)}() in ${path(r)} ${pick(r, GOTCHAS)} when ${pick(r, CONDITIONS)} (${errCode(r)}); ${pick(r, FIXES)}.`,
      };
    case 4:
      return {
        kind: 'fact',
        tags: [mod, 'config'],
        text: `${pick(r, CONSTS)} defaults to ${Math.floor(r() * 500) + 1} in ${pick(r, ['config/default.yaml', '.env.example', 'deploy/values.yaml', 'src/config.ts'])}; ${pick(r, AREAS)} reads it at startup.`,
      };
    default:
      return { kind: 'note', tags: [mod], text: `Ran \`${pick(r, COMMANDS)}\` after changing ${path(r)}: ${pick(r, OUTCOMES)}.` };
  }
}

/** A distinct trailing detail (ticket, author, date) so reused core sentences never dedupe. */
export function detail(r: Rand, serial: number): string {
  const day = new Date(Date.UTC(2024, 0, 1) + Math.floor(r() * 600) * 86_400_000).toISOString().slice(0, 10);
  return ` (${pick(r, TICKETS)}-${1000 + serial}, ${pick(r, PEOPLE)}, ${day})`;
}

export function query(r: Rand): string {
  switch (Math.floor(r() * 7)) {
    case 0:
      return `why do we use ${pick(r, LIBS)} for ${pick(r, PURPOSES)}`;
    case 1:
      return `where is ${ident(r)} defined`;
    case 2:
      return `what must ${pick(r, AREAS)} guarantee`;
    case 3:
      return `how was ${errCode(r)} fixed`;
    case 4:
      return `what breaks when ${pick(r, CONDITIONS)}`;
    case 5:
      return `default value of ${pick(r, CONSTS)}`;
    default:
      return `${pick(r, MODULES)} ${pick(r, FILES)} convention`;
  }
}


/**
 * Returns vectors set in advance (a fill's texts reuse a pool's real vectors) and falls back to the real model
 * (`model`) for anything else. Same id and dimensions as the real embedder, so the store it fills is one the
 * real server accepts. With `remember: false` a text the model embedded is asked again next time, so a
 * benchmark that times `model` sees every call.
 */
export class PrecomputedEmbedder<E extends Embedder = Embedder> implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly vectors = new Map<string, Float32Array>();
  private readonly remember: boolean;
  constructor(readonly model: E, options: { remember?: boolean } = {}) {
    this.id = model.id;
    this.dimensions = model.dimensions;
    this.remember = options.remember ?? true;
  }
  async embed(texts: string[]): Promise<Float32Array[]> {
    const missing = [...new Set(texts.filter((t) => !this.vectors.has(t)))];
    const fresh = missing.length ? await this.model.embed(missing) : [];
    const computed = new Map(missing.map((t, i) => [t, fresh[i] as Float32Array]));
    if (this.remember) for (const [t, v] of computed) this.vectors.set(t, v);
    return texts.map((t) => (this.vectors.get(t) ?? computed.get(t)) as Float32Array);
  }
  loadTimeMs(): number | null {
    return this.model.loadTimeMs();
  }
}

/**
 * A stored copy's vector: `base` plus Gaussian noise of norm about `noiseNorm` (from `gauss`, standard normal
 * draws), renormalised. Copies of one note then keep a cosine of about 0.9 to it, as paraphrases do, and every
 * stored vector is distinct, so the nearest ten of a query are well defined.
 */
export function noisyCopy(base: Float32Array, noiseNorm: number, gauss: () => number): Float32Array {
  const vector = Float32Array.from(base);
  const sigma = noiseNorm / Math.sqrt(vector.length);
  let norm = 0;
  for (let d = 0; d < vector.length; d++) {
    const x = (vector[d] as number) + sigma * gauss();
    vector[d] = x;
    norm += x * x;
  }
  norm = Math.sqrt(norm);
  for (let d = 0; d < vector.length; d++) vector[d] = (vector[d] as number) / norm;
  return vector;
}

/** Standard normal draws (Box–Muller) from a seeded generator. */
export function gaussian(r: Rand): () => number {
  return () => Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());
}

/**
 * Grows a namespace to `size` generated notes (`stored` already there), in batches of 500 saved through
 * `save` (an engine's saveMany on `filler`): each is a pool note plus a distinct detail, embedded as its pool
 * note (`embedder`), dated within two years before `now`. Returns the new count and the next serial.
 */
export async function fillSynthetic(
  o: { save: (batch: MemoryInput[]) => Promise<unknown>; filler: PrecomputedEmbedder; embedder: Embedder; pool: { text: string; kind: MemoryKind; tags: string[] }[]; r: Rand; now: Date },
  stored: number,
  size: number,
  serial: number,
): Promise<{ stored: number; serial: number }> {
  while (stored < size) {
    const batch: MemoryInput[] = [];
    for (let i = 0; i < 500 && stored + batch.length < size; i++) {
      const p = o.pool[serial % o.pool.length] as (typeof o.pool)[number];
      const text = `${p.text}${detail(o.r, serial)}`;
      o.filler.vectors.set(text, (await o.embedder.embed([p.text]))[0] as Float32Array);
      // Ages spread over two years, like the benchmark's own notes.
      batch.push({ text, kind: p.kind, tags: p.tags, createdAt: new Date(o.now.getTime() - (1 + Math.floor(o.r() * 730)) * 86_400_000).toISOString() });
      serial++;
    }
    await o.save(batch);
    for (const m of batch) o.filler.vectors.delete(m.text);
    stored += batch.length;
  }
  return { stored, serial };
}
