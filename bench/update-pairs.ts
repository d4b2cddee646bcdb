/**
 * How well write-time rules tell an update from a neighbour (`node dist/bench/update-pairs.js`): every (older, newer)
 * pair of notes of one namespace of bench/data/coding-memory-extra.json (dev material), chain pairs (two versions of
 * one subject, `subject@n`) against the others, counted under the write-time rule (topics.ts isLikelyUpdate) and
 * under candidate rules over the pair's cosine (the real embedder), its overlap coefficient (shared terms over the
 * smaller note's) and whether the newer note states a change (UPDATE_CUE). Notes only, no
 * queries.
 */
import { createUseEmbedder } from '../src/adapters/embed-use/use-embedder.js';
import { analyse } from '../src/core/lexical.js';
import { dot, isLikelyUpdate, UPDATE_CUE } from '../src/core/topics.js';
import { CODING_EXTRA_NAMESPACES } from './coding-memory.js';

interface Pair {
  chain: boolean;
  cosine: number;
  coefficient: number;
  cue: boolean;
  likely: boolean;
}

const subjectOf = (key: string): string | null => /^(.+)@\d+$/u.exec(key)?.[1] ?? null;

async function main(): Promise<void> {
  if (CODING_EXTRA_NAMESPACES.length === 0) throw new Error('bench/data/coding-memory-extra.json is missing');
  const embedder = createUseEmbedder();
  const pairs: Pair[] = [];
  for (const ns of CODING_EXTRA_NAMESPACES) {
    const vectors = await embedder.embed(ns.notes.map((n) => n.text));
    const terms = ns.notes.map((n) => new Set(analyse(n.text)));
    ns.notes.forEach((older, i) => {
      ns.notes.forEach((newer, j) => {
        if (newer.days >= older.days) return;
        const [a, b] = [terms[i] as Set<string>, terms[j] as Set<string>];
        const cosine = dot(vectors[i] as Float32Array, vectors[j] as Float32Array);
        const shared = [...b].filter((t) => a.has(t)).length;
        const subject = subjectOf(older.key);
        pairs.push({
          chain: subject !== null && subject === subjectOf(newer.key),
          cosine,
          coefficient: shared / Math.max(1, Math.min(a.size, b.size)),
          cue: UPDATE_CUE.test(newer.text),
          likely: isLikelyUpdate(newer.text, b, a, cosine),
        });
      });
    });
  }
  const chains = pairs.filter((p) => p.chain);
  const others = pairs.filter((p) => !p.chain);
  const rules: [string, (p: Pair) => boolean][] = [['write-time rule (isLikelyUpdate)', (p) => p.likely]];
  for (const c of [0.5, 0.6, 0.7]) for (const o of [0.15, 0.2, 0.25]) rules.push([`update cue, cosine ≥ ${c}, coefficient ≥ ${o}`, (p) => p.cue && p.cosine >= c && p.coefficient >= o]);
  for (const c of [0.6, 0.7]) rules.push([`cosine ≥ ${c}`, (p) => p.cosine >= c]);
  for (const [name, rule] of rules) console.log(`${name.padEnd(46)} chain pairs ${chains.filter(rule).length}/${chains.length}  other pairs ${others.filter(rule).length}/${others.length}`);
  const sorted = chains.map((p) => p.cosine).sort((x, y) => x - y);
  console.log(`chain pairs' cosine: min ${sorted[0]?.toFixed(2)}, median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(2)}, max ${sorted.at(-1)?.toFixed(2)}`);
}

await main();
