import { indexText } from '../../core/events.js';
import { analyse } from '../../core/lexical.js';
import type { Memory } from '../../interfaces/memory.js';
import type { PoolClient } from './postgres-driver.js';
import { REANALYSIS_MARK } from './postgres-schema.js';
import { termCounts } from './postgres-tx.js';

/**
 * What migrations cannot do in SQL, run right after the step reaching that version, in its transaction (as
 * SQLite's MIGRATION_FOLLOW_UPS): core analyses text, the database only stores its terms. None at present:
 * step 7's re-analysis runs after the migration, in pages of their own (continueReanalysis).
 */
export const MIGRATION_FOLLOW_UPS: ReadonlyMap<number, (client: PoolClient) => Promise<void>> = new Map();


/** Memories re-analysed per transaction. */
const PAGE = 500;

/**
 * Finishes the re-analysis step 7 asked for (core's analyser changed its terms: British spellings folded,
 * folders with their trailing slash), one page of memories per transaction, from the pk in meta onwards: each
 * memory's terms are analysed as the write path does and compared with its stored postings; only the memories
 * whose terms differ (a few in a hundred) get new postings and document length, the statistics following
 * through their triggers. A page holds only its own rows' locks (and the mark's), for milliseconds, so other
 * writers go on; since step 7 is recorded no older cairn opens the store, and this one writes the new terms,
 * so a memory written meanwhile is already right when its page comes. A crash loses at most the page in hand:
 * the next open resumes after the last page committed; two openers take turns on the mark's row lock.
 * `pages` bounds the pages done (tests); returns whether the pass is complete.
 */
export async function continueReanalysis(client: PoolClient, pages = Infinity, pageSize = PAGE): Promise<boolean> {
  for (let done = 0; done < pages; done++) {
    await client.query('BEGIN');
    try {
      // A freshly upgraded store's tables may have no statistics yet: the planner's estimates then make every
      // page's statements JIT-compile (280 ms a page at 20k memories, against 15 ms to run them).
      await client.query('SET LOCAL jit = off');
      const mark = await client.query<{ value: string }>(`SELECT value FROM meta WHERE key = $1 FOR UPDATE`, [REANALYSIS_MARK]);
      const after = mark.rows[0]?.value;
      if (after === undefined) {
        await client.query('COMMIT');
        return true;
      }
      const { rows } = await client.query<{ pk: string; namespace: string; text: string; route: string | null; doc_length: number; stored: string[] | null }>(
        `SELECT m.pk::text AS pk, m.namespace, m.text, m.route, m.doc_length,
           (SELECT array_agg(t.term || ' ' || t.tf) FROM memory_terms t WHERE t.memory_pk = m.pk) AS stored
         FROM memories m WHERE m.pk > $1::bigint ORDER BY m.pk LIMIT $2 FOR UPDATE OF m`,
        [after, pageSize],
      );
      const last = rows[rows.length - 1]?.pk;
      if (last === undefined) {
        await client.query('DELETE FROM meta WHERE key = $1', [REANALYSIS_MARK]);
      } else {
        await rewriteChanged(client, rows);
        await client.query('UPDATE meta SET value = $2 WHERE key = $1', [REANALYSIS_MARK, last]);
      }
      await client.query('COMMIT');
      if (last === undefined) return true;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    }
  }
  return (await client.query(`SELECT 1 FROM meta WHERE key = $1`, [REANALYSIS_MARK])).rows.length === 0;
}

/** Gives the memories of a page whose analysed terms differ from their stored postings the new ones. */
async function rewriteChanged(client: PoolClient, rows: { pk: string; namespace: string; text: string; route: string | null; doc_length: number; stored: string[] | null }[]): Promise<void> {
  const postings = { namespaces: [] as string[], terms: [] as string[], pks: [] as string[], tfs: [] as number[] };
  const lengths = { pks: [] as string[], lengths: [] as number[] };
  for (const row of rows) {
    const route = row.route ? (JSON.parse(row.route) as Memory['route']) : null;
    const terms = analyse(indexText({ text: row.text, route }));
    const counted = termCounts(terms);
    const stored = new Set(row.stored ?? []);
    const same = row.doc_length === terms.length + 1 && stored.size === counted.terms.length && counted.terms.every((term, i) => stored.has(`${term} ${counted.counts[i]}`));
    if (same) continue;
    counted.terms.forEach((term, i) => {
      postings.namespaces.push(row.namespace);
      postings.terms.push(term);
      postings.pks.push(row.pk);
      postings.tfs.push(counted.counts[i] as number);
    });
    lengths.pks.push(row.pk);
    lengths.lengths.push(terms.length + 1);
  }
  if (lengths.pks.length === 0) return;
  await client.query('DELETE FROM memory_terms WHERE memory_pk = ANY($1::bigint[])', [lengths.pks]);
  await client.query('INSERT INTO memory_terms (namespace, term, memory_pk, tf) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[])', [
    postings.namespaces,
    postings.terms,
    postings.pks,
    postings.tfs,
  ]);
  await client.query('UPDATE memories m SET doc_length = u.l FROM unnest($1::bigint[], $2::int[]) AS u(pk, l) WHERE m.pk = u.pk AND m.doc_length <> u.l', [lengths.pks, lengths.lengths]);
}

