import { CairnError, isCairnError } from '../interfaces/errors.js';
import type { Memory } from '../interfaces/memory.js';
import type { QuarantineEntry } from '../interfaces/quarantine.js';
import type { ErasureProof, ErasureProofReport, PendingErasure, Store, StoredEvent } from '../interfaces/store.js';
import { checkPrivateKey, signCertificate, type ErasureCertificate, type ErasureCertificateBody } from './certificate.js';
import { belongsToSubject, sameErasureScope } from './erasure-lock.js';
import { bodyOf, emit, indexedTerms, STORE_SCOPE } from './events.js';
import { ulid } from './ids.js';
import { analyse, analysedBefore } from './lexical.js';
import { stateChecksum } from './replay.js';
import { sha256Hex } from './text.js';

/**
 * Provable erasure (GDPR Article 17). Removes every copy of a namespace's or a subject's data — memory rows,
 * full-text rows, vectors, the content of their events, snapshots, quarantine entries with their held
 * text and the anchors learned from it — then checks that nothing is left (retrieval, every table, the raw
 * bytes of the database files) and signs a certificate with the operator's RS256 key.
 *
 * The log stays replayable: an erased event keeps its place and sequence number (no gap) but becomes an
 * `erased` event whose payload names only the erasure; it projects to nothing, exactly as the live store
 * now holds nothing of it, so `cairn verify` still proves the state.
 *
 * A subject is a user id; a memory belongs to it when its provenance `subject`, `speaker` or `agent` is that
 * id. A quarantine entry belongs to it when its agent is that id.
 *
 * Concurrency and crashes. The erasure first records itself as pending (erasure-lock.ts): from that commit
 * on, every writer in any process is refused in its scope, so what is selected is everything there is and
 * nothing new arrives until the certificate is issued. The erasing transaction stores the plan (ids,
 * counts, the erased texts base64-encoded so the byte scan cannot match them) with the pending record. A
 * crash after it leaves the record behind; running the same erasure again finishes it from the plan:
 * compaction, checks against the original texts, the certificate with the original counts. The record, the
 * last copy of those texts, is then overwritten and removed.
 */

export type ErasureScope = { namespace: string } | { subject: string };

export interface EraseOptions {
  scope: ErasureScope;
  /** PEM of the operator's RSA private key. */
  privateKeyPem: string;
  now: string;
}

/** What the erasing transaction did, kept with the pending record until the certificate is issued. */
interface ErasurePlan {
  counts: Record<string, number>;
  namespaces: string[];
  ids: string[];
  quarantineIds: string[];
  /** The erased texts (every version of the memories, turns, held writes), base64: a re-run checks the files for these. */
  texts: string[];
  /**
   * The erased texts' terms, base64: every version's indexed terms (events.ts indexedTerms, as postings hold
   * them: a route's title, description and paths too) and the turns' and held writes' analysed words. Absent in
   * a plan recorded before it was kept: then the texts' words, as analysed now and as analysed before British
   * spellings were folded (lexical.ts analysedBefore), which is what the store held when such a plan ran.
   */
  terms?: string[];
  vectorsRemoved: boolean;
}

function vectorHashesIn(event: StoredEvent): string[] {
  const body = bodyOf(event) as { vector?: unknown };
  return typeof body.vector === 'string' ? [body.vector] : [];
}

/** How the plan keeps erased strings (base64), so the byte scan of the pending record cannot match them. */
function encoded(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

function decoded(b64: string): string {
  return Buffer.from(b64, 'base64').toString('utf8');
}

/** The JSON-escaped form a text takes inside an event payload, to look for it in raw bytes too. */
function jsonForm(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

export async function erase(store: Store, options: EraseOptions): Promise<ErasureCertificate> {
  const { scope, now } = options;
  checkPrivateKey(options.privateKeyPem); // a bad key must stop the erasure before it starts, not after
  const own: ErasureScope = 'namespace' in scope ? { namespace: scope.namespace } : { subject: scope.subject };

  // 1. The lock: an unfinished erasure of this scope is resumed; otherwise a new one is recorded, and from
  //    its commit on no writer enters the scope. The proof is asked for after the first read (a store learns
  //    what it may do when it connects) and before the first write.
  let lock = (await store.pendingErasures()).find((p) => sameErasureScope(p.scope, own)) ?? null;
  const proof = store.erasureProof;
  if (!proof) {
    throw new CairnError('UNSUPPORTED', `this store cannot prove an erasure, so nothing was erased: ${store.noErasureProof ?? 'it offers no erasure proof'}`, {
      hint: 'cairn doctor shows the store\'s erasure proof; erase on a store that has one',
    });
  }
  if (!lock) {
    const fresh: PendingErasure = { id: ulid(Date.parse(now)), scope: own, plan: null, startedAt: now };
    await store.transaction((tx) => tx.putPendingErasure(fresh));
    lock = fresh;
  }
  const plan = (lock.plan as ErasurePlan | null) ?? (await eraseScope(store, lock, now));

  // 2. Free pages, merged full-text segments, rebuilt vector chunks: no byte of the erased data stays behind.
  const compaction = await proof.compact({ vectorsRemoved: plan.vectorsRemoved }).catch((err: unknown) => {
    throw compactionUnfinished(err);
  });

  // 3. Check, sign, and only then let writers back in.
  const { checks, report } = await checkErasure(store, proof, compaction, own, plan);
  const { checksum } = await stateChecksum(store);
  const body: ErasureCertificateBody = {
    type: 'cairn-erasure-certificate',
    version: 2,
    id: lock.id,
    scope: own,
    issuedAt: now,
    counts: plan.counts,
    checks,
    proof: report,
    stateChecksum: checksum,
  };
  const certificate = signCertificate(body, options.privateKeyPem);
  await store.finishErasure(lock.id);
  return certificate;
}

/**
 * A compaction that could not finish (on PostgreSQL: a table lock another session kept past the bounds)
 * comes after the erasing transaction committed: what it deleted stays deleted and the scope stays closed
 * to writers, but nothing was checked, so no certificate is issued; the same erasure run again resumes from
 * its record.
 */
function compactionUnfinished(err: unknown): unknown {
  if (!isCairnError(err)) return err;
  return new CairnError(err.code, `${err.message}; the erasure's deletions are committed and its scope stays closed to writers, but the compaction did not finish, so no certificate was issued`, {
    cause: err,
    hint: `${err.hint ? `${err.hint}; then ` : ''}run the same erasure again: it resumes from its record`,
  });
}

/**
 * Selects everything of the scope (no writer can add to it now) and erases it in one transaction.
 * The selection is read before the transaction (the erasure lock keeps writers out of the scope); inside it
 * reads only what sizes the deletes the certificate counts (learned anchors, settings, snapshots) and whether
 * a vector blob is still referenced, which another namespace's writer could change until the commit.
 */
async function eraseScope(store: Store, lock: PendingErasure, now: string): Promise<ErasurePlan> {
  const scope = lock.scope;
  const certificateId = lock.id;
  const isNamespace = 'namespace' in scope;

  // What is to be erased: memories, then every event that carries their content.
  const targets: Memory[] = [];
  const namespaces = new Set<string>();
  if (isNamespace) {
    namespaces.add(scope.namespace);
    for await (const page of store.iterateMemories(scope.namespace)) targets.push(...page);
  } else {
    for await (const page of store.iterateMemories(undefined)) {
      for (const m of page) if (belongsToSubject(m, scope.subject)) targets.push(m);
    }
    for (const m of targets) namespaces.add(m.namespace);
  }
  const ids = new Set(targets.map((m) => m.id));
  const quarantine: QuarantineEntry[] = (await store.listQuarantine({ status: 'all', limit: 1_000_000 })).filter((q) =>
    isNamespace ? q.namespace === scope.namespace : q.agent === scope.subject,
  );
  const quarantineIds = new Set(quarantine.map((q) => q.id));

  const erasedEvents: StoredEvent[] = [];
  for await (const page of store.iterateEvents(0, 5000)) {
    for (const e of page) {
      const body = bodyOf(e) as { type: string; items?: string[]; entry?: { id?: string } };
      const hit =
        (isNamespace && e.namespace === scope.namespace) ||
        (e.memoryId !== null && ids.has(e.memoryId)) ||
        (body.type === 'turn.committed' && (body.items ?? []).some((id) => ids.has(id))) ||
        (e.namespace === STORE_SCOPE && body.type.startsWith('quarantine.') && quarantineIds.has(body.entry?.id ?? ''));
      if (hit) erasedEvents.push(e);
    }
  }
  const turnTexts = erasedEvents.flatMap((e) => {
    const body = bodyOf(e) as { type: string; text?: string };
    return body.type === 'turn.committed' && typeof body.text === 'string' ? [body.text] : [];
  });
  const heldTexts: string[] = [];
  for (const q of quarantine) {
    const vault = await store.getQuarantineVault(q.id);
    if (vault) heldTexts.push(vault.text);
  }
  // Every version of the erased memories, as their events carry them (a text replaced by an update was indexed,
  // and may have been sampled, as well as the current one).
  const versions: Pick<Memory, 'text' | 'route'>[] = [...targets];
  for (const e of erasedEvents) {
    const body = bodyOf(e) as { memory?: { text?: unknown; route?: Memory['route'] } };
    if (typeof body.memory?.text === 'string') versions.push({ text: body.memory.text, route: body.memory.route ?? null });
  }
  const texts = [...new Set([...versions.map((m) => m.text), ...turnTexts, ...heldTexts])];
  const terms = [...new Set([...versions.flatMap(indexedTerms), ...[...turnTexts, ...heldTexts].flatMap((t) => analyse(t))])];
  const hashes = new Set(erasedEvents.flatMap(vectorHashesIn));

  // Erase, in one transaction, which also stores the plan with the pending record.
  const counts: Record<string, number> = {
    memories: targets.length,
    fullTextRows: targets.length,
    vectors: 0,
    events: erasedEvents.length,
    snapshots: 0,
    settings: 0,
    vectorBlobs: 0,
    quarantineEntries: quarantine.length,
    quarantineVault: heldTexts.length,
    learnedAnchors: 0,
  };
  const withVectors = (await store.getVectors([...ids])).size;
  counts['vectors'] = withVectors;
  const plan: ErasurePlan = {
    counts,
    namespaces: [...namespaces],
    ids: [...ids],
    quarantineIds: [...quarantineIds],
    texts: texts.map(encoded),
    terms: terms.map(encoded),
    vectorsRemoved: withVectors > 0,
  };
  await store.transaction(async (tx) => {
    // Every scope this erasure writes, up front in one order (no deadlock with another multi-scope writer).
    await tx.lockScopes?.([STORE_SCOPE, ...namespaces, ...erasedEvents.map((e) => e.namespace), ...targets.map((m) => m.namespace)]);
    for (const e of erasedEvents) {
      await tx.rewriteEvent(e.namespace, e.seq, 'erased', { erasure: certificateId, was: e.type });
    }
    for (const m of targets) {
      await tx.deleteMemory(m.id);
      // A memory marked poisoned taught an anchor derived from its text: it goes with the memory.
      if (await tx.getLearnedAnchor(`poison-${m.id}`)) {
        await tx.deleteLearnedAnchor(`poison-${m.id}`);
        counts['learnedAnchors'] = (counts['learnedAnchors'] ?? 0) + 1;
      }
    }
    if (isNamespace) {
      counts['settings'] = (await tx.settingsOf(scope.namespace)).length;
      await tx.clearProjection(scope.namespace);
    }
    for (const ns of namespaces) {
      if (await tx.getSnapshot(ns)) {
        await tx.deleteSnapshot(ns);
        counts['snapshots'] = (counts['snapshots'] ?? 0) + 1;
      }
    }
    for (const q of quarantine) {
      await tx.deleteQuarantineEntry(q.id);
      await tx.deleteQuarantineVault(q.id);
      if (await tx.getLearnedAnchor(q.id)) {
        await tx.deleteLearnedAnchor(q.id);
        counts['learnedAnchors'] = (counts['learnedAnchors'] ?? 0) + 1;
      }
    }
    for (const hash of hashes) {
      if (!(await tx.vectorBlobReferenced(hash))) {
        await tx.deleteVectorBlob(hash);
        counts['vectorBlobs'] = (counts['vectorBlobs'] ?? 0) + 1;
      }
    }
    await emit(
      tx,
      STORE_SCOPE,
      {
        type: 'erasure.completed',
        certificate: certificateId,
        scope: isNamespace ? { namespace: scope.namespace } : { subjectSha256: sha256Hex(scope.subject) },
        counts,
      },
      now,
    );
    await tx.putPendingErasure({ ...lock, plan });
  });
  return plan;
}

/** Every text the remaining memories hold, joined, to tell an erased text from a copy that must stay. */
async function remainingText(store: Store): Promise<string> {
  const parts: string[] = [];
  for await (const page of store.iterateMemories(undefined)) for (const m of page) parts.push(m.text);
  return parts.join('\u0000');
}

/** What the terms of a plan recorded before it kept its terms are, in the proof's report. */
const TERMS_OF_OLDER_PLAN = " (the plan predates kept terms: the erased texts' words as analysed now and before spellings were folded; a route's title, description and paths were not looked for)";

/** Retrieval, tables and raw bytes, against the plan (the original selection, also after a crash). */
async function checkErasure(
  store: Store,
  proof: ErasureProof,
  compaction: string[],
  scope: ErasureScope,
  plan: ErasurePlan,
): Promise<{ checks: ErasureCertificateBody['checks']; report: ErasureProofReport }> {
  const isNamespace = 'namespace' in scope;
  const ids = new Set(plan.ids);
  const quarantineIds = new Set(plan.quarantineIds);
  const checks: ErasureCertificateBody['checks'] = [];
  let leftInRecall = 0;
  for (const ns of plan.namespaces) {
    for await (const page of store.iterateMemories(ns)) {
      leftInRecall += page.filter((m) => ids.has(m.id) || (!isNamespace && belongsToSubject(m, scope.subject))).length;
      if (isNamespace) leftInRecall += page.length;
    }
  }
  checks.push({ name: 'retrieval', passed: leftInRecall === 0, detail: `${leftInRecall} memories of the erased scope still retrievable` });
  const leftEvents = await store.countLiveEventsOf(plan.ids, isNamespace ? scope.namespace : null);
  const leftQuarantine = (await store.listQuarantine({ status: 'all', limit: 1_000_000 })).filter((q) => quarantineIds.has(q.id)).length;
  const leftSnapshots = (await Promise.all(plan.namespaces.map((ns) => store.getSnapshot(ns)))).filter(Boolean).length;
  const leftAnchors = (await store.learnedAnchors()).filter((a) => quarantineIds.has(a.id)).length;
  const leftRows = leftEvents + leftQuarantine + leftSnapshots + leftAnchors;
  checks.push({
    name: 'tables',
    passed: leftRows === 0,
    detail: `rows left: events ${leftEvents}, quarantine ${leftQuarantine}, snapshots ${leftSnapshots}, learned anchors ${leftAnchors}`,
  });
  // Raw bytes: every erased text of at least 12 characters (shorter ones could occur by chance), as stored
  // and as escaped inside JSON, unless a memory that remains (another namespace, another subject) holds it:
  // that copy is not the erased data and must stay.
  const kept = await remainingText(store);
  const texts = plan.texts.map(decoded).filter((t) => t.length >= 12);
  const erasedOnly = texts.filter((t) => !kept.includes(t));
  const needles = [...new Set(erasedOnly.flatMap((t) => [t, jsonForm(t)]))];
  // The erased terms (as postings keep them: lower case, stemmed) that no remaining memory holds: a backend
  // keeping sampled column values (PostgreSQL's planner statistics) looks for these too.
  // A plan recorded before it kept them: the terms its texts give, as the store indexes them now and as it
  // indexed them when the plan ran (before spellings were folded), since sampled values may hold either. Its
  // routes' titles, descriptions and paths were not kept, so their terms are not looked for; the report says so.
  const candidates = plan.terms ? plan.terms.map(decoded) : [...new Set(plan.texts.flatMap((b) => [...analyse(decoded(b)), ...analysedBefore(decoded(b))]))];
  const still = candidates.length > 0 ? (await store.termDocumentFrequencies(candidates)).frequencies : new Map<string, number>();
  const terms = candidates.filter((t) => !still.has(t));
  const report = await proof.check(needles, compaction, terms);
  const found = report.found;
  const shared = texts.length - erasedOnly.length;
  const read = report.scanned.filter((s) => s.files > 0);
  const readLine = read.map((s) => `${s.what} ${s.files > 1 ? `×${s.files} ` : ''}${s.bytes} bytes`).join(', ');
  const unproven = report.unproven ?? [];
  checks.push({
    name: 'file-bytes',
    passed: found === 0 && unproven.length === 0,
    detail: `${found} of ${needles.length} erased strings${report.termsSearched ? ` and ${report.termsSearched} erased terms${plan.terms ? '' : TERMS_OF_OLDER_PLAN}` : ''} found in the database files (${report.backend}: ${readLine})${shared ? ` (${shared} erased texts also held by memories that remain were not looked for)` : ''}${unproven.length ? `; not proven: ${unproven.join('; ')}` : ''}`,
  });
  return { checks, report };
}
