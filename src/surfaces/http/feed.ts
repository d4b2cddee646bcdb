import type { Hono, Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Engine } from '../../core/engine.js';
import type { ProvenanceFilter } from '../../interfaces/memory.js';
import type { AccessScope } from '../../interfaces/store.js';
import type { AuthEnv } from './auth.js';
import { memoryView } from './views.js';

/** How often the feed reads the event log, and how often it sends a comment to keep proxies from closing it. */
const POLL_MS = 1000;
const KEEPALIVE_MS = 15_000;

/** The provenance filter of a request: `source`, `agent` and `session` query parameters. */
export function provenanceQuery(c: Context<AuthEnv>): ProvenanceFilter {
  const q = (name: string) => c.req.query(name) || undefined;
  return { source: q('source'), agent: q('agent'), sessionId: q('session') };
}

/**
 * `GET /api/feed?namespace&source&agent&session`: a server-sent event (`memory`, its id the log position) for
 * each memory stored in the namespace from now on, by any process sharing the database. A reconnecting
 * client sends Last-Event-ID (or `after`) and misses nothing in between.
 */
export function registerFeed(api: Hono<AuthEnv>, engine: Engine, nsFor: (c: Context<AuthEnv>, need: AccessScope, given: unknown) => string): void {
  api.get('/feed', async (c) => {
    const namespace = nsFor(c, 'read', c.req.query('namespace'));
    const provenance = provenanceQuery(c);
    const resume = c.req.header('last-event-id') ?? c.req.query('after');
    const start = resume !== undefined && /^\d+$/u.test(resume) ? Number(resume) : null;
    // Checked before the stream opens, so a bad filter is an ordinary error response.
    let { seq } = await engine.storedSince(start, { namespace, provenance });
    if (start !== null) seq = start;
    return streamSSE(c, async (stream) => {
      await stream.writeSSE({ event: 'ready', data: JSON.stringify({ namespace, seq, provenance }), id: String(seq) });
      let quiet = 0;
      while (!stream.aborted && !stream.closed) {
        const next = await engine.storedSince(seq, { namespace, provenance });
        for (const m of next.memories) await stream.writeSSE({ event: 'memory', data: JSON.stringify(memoryView(m)), id: String(next.seq) });
        seq = next.seq;
        quiet = next.memories.length ? 0 : quiet + POLL_MS;
        if (quiet >= KEEPALIVE_MS) {
          await stream.write(': keepalive\n\n');
          quiet = 0;
        }
        await stream.sleep(POLL_MS);
      }
    });
  });
}
