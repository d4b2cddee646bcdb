import { indexText } from '../../core/events.js';
import { analyse } from '../../core/lexical.js';
import type { Memory } from '../../interfaces/memory.js';
import type { PoolClient } from './postgres-driver.js';
import { termCounts } from './postgres-tx.js';

/**
 * What migrations cannot do in SQL, run right after the step reaching that version, in its transaction (as
 * SQLite's MIGRATION_FOLLOW_UPS): core analyses text, the database only stores its terms.
 */
export const MIGRATION_FOLLOW_UPS: ReadonlyMap<number, (client: PoolClient) => Promise<void>> = new Map([[7, reanalyseTerms]]);

/** Memories re-analysed per round trip. */
const PAGE = 500;

/**
 * Re-analyses every memory's text (and route) with core's analyser, as the write path does: its postings are
 * replaced and its document length set, in pages. The term and namespace statistics follow through their
 * triggers. The step's table locks keep writers out until the migration commits.
 */
async function reanalyseTerms(client: PoolClient): Promise<void> {
  for (let after = '0'; ; ) {
    const { rows } = await client.query<{ pk: string; namespace: string; text: string; route: string | null }>(
      'SELECT pk::text AS pk, namespace, text, route FROM memories WHERE pk > $1::bigint ORDER BY pk LIMIT $2',
      [after, PAGE],
    );
    if (rows.length === 0) return;
    const postings = { namespaces: [] as string[], terms: [] as string[], pks: [] as string[], tfs: [] as number[] };
    const lengths = { pks: [] as string[], lengths: [] as number[] };
    for (const row of rows) {
      const route = row.route ? (JSON.parse(row.route) as Memory['route']) : null;
      const terms = analyse(indexText({ text: row.text, route }));
      const counted = termCounts(terms);
      counted.terms.forEach((term, i) => {
        postings.namespaces.push(row.namespace);
        postings.terms.push(term);
        postings.pks.push(row.pk);
        postings.tfs.push(counted.counts[i] as number);
      });
      lengths.pks.push(row.pk);
      lengths.lengths.push(terms.length + 1);
    }
    const pks = rows.map((r) => r.pk);
    await client.query('DELETE FROM memory_terms WHERE memory_pk = ANY($1::bigint[])', [pks]);
    await client.query('INSERT INTO memory_terms (namespace, term, memory_pk, tf) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[])', [
      postings.namespaces,
      postings.terms,
      postings.pks,
      postings.tfs,
    ]);
    await client.query('UPDATE memories m SET doc_length = u.l FROM unnest($1::bigint[], $2::int[]) AS u(pk, l) WHERE m.pk = u.pk AND m.doc_length <> u.l', [lengths.pks, lengths.lengths]);
    after = rows[rows.length - 1]?.pk as string;
  }
}
