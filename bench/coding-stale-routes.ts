/**
 * Stale-route cases of the coding-memory benchmark: a route whose file moved is recalled with its new path.
 *
 * For each namespace of bench/coding-memory-data.ts a real git repository holds every route's paths; the
 * namespace's live notes are saved in it (anchored at that commit); then every second route's first path is
 * moved with `git mv` and committed. Each route query runs as `route_query` does (routes only, 5 results):
 *   - moved routes: the route is found and carries `moved to <its new path>` (marked);
 *   - unmoved routes: found without a mark (a mark there is a false alarm);
 *   - after `followMoves` (one call per moved route), the query finds the new version, whose paths hold the
 *     new path and which carries no mark.
 * No choice is tuned on these cases: marking is rule-based (git's rename detection).
 */
import { isCairnError } from '../src/interfaces/errors.js';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createGitRepository } from '../src/adapters/git/git-repository.js';
import { createSqliteStore } from '../src/adapters/sqlite/sqlite-store.js';
import { createGptTokenCounter } from '../src/adapters/tokenizer/gpt-token-counter.js';
import { Engine } from '../src/core/engine.js';
import type { Embedder } from '../src/interfaces/embedder.js';
import { CODING_NAMESPACES } from './coding-memory-data.js';

export interface StaleRouteFigures {
  routes: number;
  moved: number;
  queries: number;
  movedQueries: number;
  /** Moved-route queries whose route is found (top 5) and marked `moved to` its new path. */
  markedWithNewPath: number | null;
  /** Unmoved-route queries whose route is found and carries a mark (false alarms). */
  falseMarks: number;
  /** Route found at rank 1 before the move was followed, all route queries. */
  r1: number | null;
  /** After followMoves: moved-route queries answered first by the new version, holding the new path, unmarked. */
  followedR1: number | null;
}

const ratio = (a: number, b: number) => (b ? Math.round((a / b) * 10000) / 10000 : null);

/** The path a route's first path moves to: one folder deeper (`src/tax/round.ts` → `src/tax/moved/round.ts`). */
function movedPath(path: string): string {
  const clean = path.replace(/\/+$/u, '');
  const at = clean.lastIndexOf('/');
  return at < 0 ? `moved/${clean}` : `${clean.slice(0, at)}/moved${clean.slice(at)}`;
}

/** Whether two paths are the same or one holds the other. */
function overlaps(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

export async function staleRouteCases(embedder: Embedder): Promise<StaleRouteFigures> {
  const base = mkdtempSync(join(tmpdir(), 'cairn-stale-routes-'));
  const env = { ...process.env, HOME: base, GIT_CONFIG_GLOBAL: join(base, '.gitconfig'), GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'bench', GIT_AUTHOR_EMAIL: 'b@example.com', GIT_COMMITTER_NAME: 'bench', GIT_COMMITTER_EMAIL: 'b@example.com' };
  const f = { routes: 0, moved: 0, queries: 0, movedQueries: 0, marked: 0, falseMarks: 0, r1: 0, followed: 0 };
  try {
    for (const [i, ns] of CODING_NAMESPACES.entries()) {
      const dir = join(base, `repo-${i}`);
      mkdirSync(dir);
      const git = (...a: string[]) => execFileSync('git', a, { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      git('init', '-q', '-b', 'main');
      const routes = ns.notes.filter((n) => n.route && !n.state);
      for (const r of routes) {
        for (const p of r.route?.paths ?? []) {
          const file = p.endsWith('/') ? `${p}index.ts` : p;
          mkdirSync(join(dir, dirname(file)), { recursive: true });
          writeFileSync(join(dir, file), `// ${r.route?.title}: ${file}\n${'export const x = 1;\n'.repeat(5)}`);
        }
      }
      git('add', '-A');
      git('commit', '-q', '-m', 'code');
      const store = createSqliteStore({ path: join(base, `cairn-${i}.db`) });
      const engine = new Engine({ store, embedder, tokenCounter: createGptTokenCounter(), defaultNamespace: ns.namespace, repository: createGitRepository({ cwd: dir }), countRecalls: false });
      const idOf = new Map<string, string>();
      for (const n of ns.notes.filter((x) => !x.state)) {
        const saved = await engine
          .save({ text: n.text, kind: n.kind, ...(n.route ? { route: { title: n.route.title, description: n.text, paths: n.route.paths } } : {}) })
          .catch((err: unknown) => {
            // The ingest filter (product default) may hold a note; coding-memory.ts leaves it out too.
            if (isCairnError(err, 'QUARANTINED')) return null;
            throw err;
          });
        if (saved) idOf.set(n.key, saved.id);
      }
      const moves = new Map<string, { from: string; to: string }>();
      routes.forEach((r, k) => {
        const from = (r.route?.paths[0] as string).replace(/\/+$/u, '');
        if (k % 2 === 1 || [...moves.values()].some((m) => overlaps(from, m.from))) return;
        const to = movedPath(from);
        mkdirSync(join(dir, dirname(to)), { recursive: true });
        git('mv', from, to);
        moves.set(r.key, { from, to });
      });
      git('commit', '-q', '-m', 'move');
      f.routes += routes.length;
      f.moved += moves.size;
      for (const r of routes) {
        const id = idOf.get(r.key) as string;
        const move = moves.get(r.key);
        for (const [, query] of r.q ?? []) {
          f.queries++;
          const results = await engine.search(query, { kinds: ['route'], limit: 5, countRecall: false });
          const hit = results.find((x) => x.memory.id === id);
          if (results[0]?.memory.id === id) f.r1++;
          if (move) {
            f.movedQueries++;
            if (hit?.stale?.some((s) => s.status === 'moved' && s.path === move.from && s.newPath === move.to)) f.marked++;
          } else if (hit?.stale?.length && !(r.route?.paths ?? []).some((p) => [...moves.values()].some((m) => overlaps(p.replace(/\/+$/u, ''), m.from)))) f.falseMarks++;
        }
      }
      for (const [key, move] of moves) {
        const r = await engine.followMoves(idOf.get(key) as string);
        const route = routes.find((x) => x.key === key);
        for (const [, query] of route?.q ?? []) {
          const [top] = await engine.search(query, { kinds: ['route'], limit: 5, countRecall: false });
          if (top?.memory.id === r.memory.id && top.memory.route?.paths.includes(move.to) && !top.stale) f.followed++;
        }
      }
      await store.close();
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
  return {
    routes: f.routes,
    moved: f.moved,
    queries: f.queries,
    movedQueries: f.movedQueries,
    markedWithNewPath: ratio(f.marked, f.movedQueries),
    falseMarks: f.falseMarks,
    r1: ratio(f.r1, f.queries),
    followedR1: ratio(f.followed, f.movedQueries),
  };
}
