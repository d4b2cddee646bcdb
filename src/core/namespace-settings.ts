// Per-namespace settings (fusion weights, default scope), branch reconciliation and folder sync.
import { CairnError, isCairnError } from '../interfaces/errors.js';
import type { MemoryInput, MemoryScope, Provenance, SignalWeights } from '../interfaces/memory.js';
import { emit } from './events.js';
import { SCOPE_SETTING } from './code-awareness.js';
import { reconcileBranches, type BranchReport } from './branches.js';
import { syncFolder, type ImportOutcome, type SyncOps, type SyncReport, type SyncSide } from './sync.js';
import type { MemoryFolder } from '../interfaces/sync.js';
import { validateId, validateAnchors, validateScope, validateShare } from './validate.js';
import { RELATED_TERMS_SETTING, relatedWeight, type RelatedTerms } from './related-terms.js';
import type { EngineContext, SaveOutcome } from './engine-context.js';
import { forget, supersede } from './lifecycle.js';
import { liveMemories, memoryIn } from './reads.js';
import { weightsFor } from './recall.js';
import { saveScreened, update } from './write-path.js';


/** Sets the namespace's fusion weights (shared by every agent using this store). */
export async function setWeights(ctx: EngineContext, weights: Partial<SignalWeights>, options: { namespace?: string } = {}): Promise<SignalWeights> {
  const namespace = ctx.ns(options.namespace);
  const merged = await weightsFor(ctx, namespace, weights);
  await ctx.store.transaction(async (tx) => {
    await emit(tx, namespace, { type: 'settings.changed', key: 'weights', value: merged }, ctx.now());
  });
  return merged;
}

export async function getWeights(ctx: EngineContext, options: { namespace?: string } = {}): Promise<SignalWeights> {
  return weightsFor(ctx, ctx.ns(options.namespace));
}

/**
 * Sets how much related terms (the engineering vocabulary, related-terms.ts) count in this namespace's
 * lexical signal, 0 to 1; 0 turns expansion off.
 */
export async function setRelatedTerms(ctx: EngineContext, weight: number, options: { namespace?: string } = {}): Promise<RelatedTerms> {
  const namespace = ctx.ns(options.namespace);
  const value: RelatedTerms = { weight: validateShare(weight, 'weight') };
  await ctx.store.transaction(async (tx) => {
    await emit(tx, namespace, { type: 'settings.changed', key: RELATED_TERMS_SETTING, value }, ctx.now());
  });
  return value;
}

export async function getRelatedTerms(ctx: EngineContext, options: { namespace?: string } = {}): Promise<RelatedTerms> {
  return { weight: await relatedWeight(ctx, ctx.ns(options.namespace)) };
}

/** Sets the scope of notes saved without one in this namespace: `branch` or `repository` (the default). */
export async function setDefaultScope(ctx: EngineContext, scope: MemoryScope, options: { namespace?: string } = {}): Promise<MemoryScope> {
  const namespace = ctx.ns(options.namespace);
  const value = validateScope(scope);
  await ctx.store.transaction(async (tx) => {
    await emit(tx, namespace, { type: 'settings.changed', key: SCOPE_SETTING, value }, ctx.now());
  });
  return value;
}

export async function getDefaultScope(ctx: EngineContext, options: { namespace?: string } = {}): Promise<MemoryScope> {
  return ctx.code.defaultScope(ctx.ns(options.namespace));
}

/**
 * Settles the namespace's branch-scoped notes against the repository (see branches.ts): merged branches'
 * notes join the repository tier, notes of branches deleted unmerged are forgotten after the grace period.
 * UNSUPPORTED outside the namespace's git repository.
 */
export async function reconcileNamespaceBranches(ctx: EngineContext, options: { namespace?: string } = {}): Promise<BranchReport> {
  const namespace = ctx.ns(options.namespace);
  const resolver = ctx.code.applies(namespace) ? await ctx.code.branches() : null;
  if (!resolver) throw new CairnError('UNSUPPORTED', `branch scope needs the git repository of namespace ${namespace}; run this inside it`);
  return reconcileBranches(ctx.store, resolver, namespace, ctx.now());
}

/**
 * Syncs the namespace with a memory folder (`.cairn/` of the repository; see sync.ts). Imports and edits
 * are ordinary writes (redacted, screened by the ingest filter, logged); branch notes are settled first
 * when the namespace is this repository's, and only repository-tier memories are written.
 */
export async function syncWithFolder(ctx: EngineContext, folder: MemoryFolder, options: { namespace?: string; resolve?: ReadonlyMap<string, SyncSide> } = {}): Promise<SyncReport> {
  const namespace = ctx.ns(options.namespace);
  if (ctx.code.applies(namespace) && (await ctx.code.branches())) await reconcileNamespaceBranches(ctx, { namespace });
  const metadata: Provenance = { source: 'sync', origin: 'user' };
  const ops: SyncOps = {
    live: () => liveMemories(ctx, namespace, (m) => !m.code?.branch),
    get: (id) => memoryIn(ctx, id, { namespace }),
    importFiles: async (files) => {
      const prepared = await Promise.all(
        files.map(async (f) => {
          const target = f.supersedes ? await memoryIn(ctx, f.supersedes, { namespace }) : null;
          const input: MemoryInput = {
            text: f.text,
            namespace,
            kind: f.kind,
            importance: f.importance,
            tags: f.tags,
            taskId: f.task,
            route: f.route,
            expiresAt: f.expires,
            // A target already replaced here is not linked again; an unknown one is kept as a reference.
            supersedes: target?.supersededBy ? null : f.supersedes,
            metadata,
            ...(f.created ? { createdAt: f.created } : {}),
          };
          return { input, given: { id: validateId(f.id), code: f.anchors.length ? { commit: f.commit, anchors: validateAnchors(f.anchors, 'anchors') } : null } };
        }),
      );
      const outcome = (r: SaveOutcome | undefined): ImportOutcome =>
        !r ? { error: 'no result' } : 'quarantined' in r ? { held: r.quarantined.id } : r.duplicate ? { duplicateOf: r.id } : { imported: r.memory };
      try {
        const results = await saveScreened(ctx, prepared.map((p) => p.input), { partial: true, recordLikelyReplaces: false, given: prepared.map((p) => p.given) });
        return results.map(outcome);
      } catch {
        // One bad file fails its batch: import one at a time so the others land and it is named.
        const one: ImportOutcome[] = [];
        for (const p of prepared) {
          try {
            one.push(outcome((await saveScreened(ctx, [p.input], { partial: true, recordLikelyReplaces: false, given: [p.given] }))[0]));
          } catch (err) {
            if (!isCairnError(err)) throw err;
            one.push({ error: err.message });
          }
        }
        return one;
      }
    },
    applyEdit: async (m, f) => {
      try {
        const sameRoute = JSON.stringify(f.route ?? null) === JSON.stringify(m.route ?? null);
        if (f.text !== m.text || !sameRoute) {
          const r = await supersede(ctx, m.id, { text: f.text, namespace, kind: f.kind, importance: f.importance, tags: f.tags, route: f.route, metadata });
          return { memory: r.memory, superseded: true };
        }
        return { memory: await update(ctx, m.id, { kind: f.kind, importance: f.importance, tags: f.tags }, { namespace }), superseded: false };
      } catch (err) {
        // The message names the entry: `quarantine <id>`.
        if (isCairnError(err, 'QUARANTINED')) return { held: /quarantine ([0-9A-Z]{26})/u.exec(err.message)?.[1] ?? 'unknown' };
        throw err;
      }
    },
    forget: async (id, reason) => {
      await forget(ctx, id, { namespace, reason });
    },
  };
  return syncFolder(folder, ops, options.resolve);
}
