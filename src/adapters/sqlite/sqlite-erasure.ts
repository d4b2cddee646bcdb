import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isCurrent } from '../../interfaces/memory.js';
import type { ErasureProof, ErasureProofReport, PendingErasure, StoreTx } from '../../interfaces/store.js';
import { namesStartingWith } from './sqlite-saved-files.js';
import { vectorTableSql } from './sqlite-vector-table.js';
import { translate, type SqliteConnection } from './sqlite-connection.js';
import type { Row } from './sqlite-rows.js';

/** Counts the needles (JSON on stdin) found in the raw bytes of the files named in argv; prints {found, bytes[]}. */
const RAW_SCAN_SCRIPT = `
const fs = require('node:fs');
const needles = JSON.parse(fs.readFileSync(0, 'utf8'));
const contents = process.argv.slice(1).map((f) => fs.readFileSync(f));
const found = needles.filter((n) => contents.some((c) => c.includes(Buffer.from(n, 'utf8')))).length;
process.stdout.write(JSON.stringify({ found, bytes: contents.map((c) => c.length) }));
`;

/** The files the scan reads, beside the database file, and what each is. */
const FILES: readonly { suffix: string; what: string }[] = [
  { suffix: '', what: 'database file' },
  { suffix: '-wal', what: 'write-ahead log (-wal)' },
  { suffix: '-shm', what: 'shared-memory index (-shm)' },
  { suffix: '.usearch', what: 'quantised vector index (.usearch)' },
];

/** The neighbour graphs saved beside the database and their temporaries (`<db>.graph.*`, `<db>.graph-*`). */
function graphFiles(location: string): { what: string; path: string }[] {
  const base = basename(location);
  return [...namesStartingWith(`${location}.graph.`), ...namesStartingWith(`${location}.graph-`)]
    .map((n) => ({ what: n.startsWith(`${base}.graph-`) ? 'neighbour graph temporary (.graph-*)' : 'saved neighbour graph (.graph.*)', path: join(dirname(location), n) }));
}

/** Erasure support: erasures in progress, compaction so erased bytes leave the file, and the raw-file check. */
export class SqliteErasure {
  constructor(private readonly c: SqliteConnection) {}

  private pendingErasuresSync(): PendingErasure[] {
    const rows = this.c.stmt('SELECT id, scope, plan, started_at FROM pending_erasures ORDER BY started_at, id').all() as Row[];
    return rows.map((r) => ({
      id: r['id'] as string,
      scope: JSON.parse(r['scope'] as string) as PendingErasure['scope'],
      plan: r['plan'] === null ? null : (JSON.parse(r['plan'] as string) as unknown),
      startedAt: r['started_at'] as string,
    }));
  }

  async pendingErasures(): Promise<PendingErasure[]> {
    return this.c.read('reading erasures in progress', () => this.pendingErasuresSync());
  }

  async finishErasure(id: string): Promise<void> {
    this.c.ensureOpen();
    this.c.refuseWrite('finishing the erasure');
    await this.c.mutex.run(async () => {
      // secure_delete overwrites the row's bytes in the page; the checkpoint clears the write-ahead log.
      this.c.db.pragma('secure_delete = ON');
      await this.c.whileBusy('finishing the erasure', () => this.c.db.prepare('DELETE FROM pending_erasures WHERE id = ?').run(id));
      await this.c.checkpoint();
    });
  }

  /**
   * The embedded store's proof: FTS5 merge, vec0 rebuild, VACUUM with secure_delete, then a byte scan of the
   * database file, its WAL and shared-memory files and the quantised vector index. Absent for `:memory:`,
   * which has no files to read.
   */
  proof(): ErasureProof | undefined {
    if (this.c.location === ':memory:') return undefined;
    return {
      method: 'FTS5 optimize, vector table rebuilt, VACUUM (secure_delete), WAL truncated; then the bytes of the database, -wal, -shm, .usearch and neighbour graph files are scanned',
      compact: (options) => this.compact(options),
      check: (needles, compaction) => this.check(needles, compaction),
    };
  }

  private async compact(options: { vectorsRemoved: boolean }): Promise<string[]> {
    const steps: string[] = [];
    this.c.ensureOpen();
    this.c.refuseWrite('compacting after an erasure');
    const what = 'compacting after an erasure';
    // The FTS merge and the vector table's rebuild rewrite most of their tables inside one transaction, and VACUUM
    // copies the whole database: their transient files on disk, not in memory (switched outside the transaction).
    await this.c.mutex.run(() =>
      this.c.withTempFiles(async () => {
        try {
          // Under the write lock, so no other process's write falls between reading the rows and rebuilding.
          await this.c.whileBusy(what, () => this.c.db.exec('BEGIN IMMEDIATE'));
          try {
            // FTS5 keeps deleted entries in its segments until they are merged.
            this.c.db.exec(`INSERT INTO memories_fts (memories_fts) VALUES ('optimize')`);
            steps.push('full-text index optimized (FTS5 segments merged, deleted entries dropped)');
            if (options.vectorsRemoved) {
              // The erasure marker: every process drops, and never saves, a neighbour graph made before it.
              this.c.db.exec(`INSERT INTO meta (key, value) VALUES ('erasures', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`);
              steps.push('erasure recorded: saved neighbour graphs made before it are refused and never saved again');
            }
            if (options.vectorsRemoved && this.c.vectorDims !== null) {
              steps.push(`vector table ${this.c.vectorTable} rebuilt from the remaining vectors`);
              // vec0 marks deleted rows but may keep their bytes in its chunks: rebuild the index from the rows left.
              const rows = this.c.stmt('SELECT m.rowid AS rowid, m.namespace, m.kind, m.forgotten_at, m.superseded_by, b.data FROM memories m JOIN vector_blobs b ON b.hash = m.vector_hash').all() as Row[];
              // A maintenance transaction of its own (not a StoreTx), so dropping and re-creating the table is allowed.
              this.c.db.exec(`DROP TABLE ${this.c.vectorTable}`);
              this.c.statements.clear();
              this.c.db.exec(vectorTableSql(this.c.vectorDims));
              const ins = this.c.stmt(`INSERT INTO ${this.c.vectorTable} (rowid, namespace, active, kind, embedding) VALUES (?, ?, ?, ?, ?)`);
              for (const r of rows) {
                const current = isCurrent({ forgottenAt: r['forgotten_at'] as string | null, supersededBy: r['superseded_by'] as string | null });
                ins.run(BigInt(r['rowid'] as number), r['namespace'], current ? 1n : 0n, r['kind'], r['data']);
              }
            }
            this.c.db.exec('COMMIT');
          } catch (err) {
            if (this.c.db.inTransaction) this.c.db.exec('ROLLBACK');
            throw err;
          }
          if (options.vectorsRemoved && this.c.vectorIndex) {
            this.c.vectorIndex.discard();
            steps.push('quantised vector index file and saved coarse lists discarded (rebuilt from the remaining vectors on next use)');
          }
          await this.c.checkpoint();
          this.c.db.pragma('secure_delete = ON');
          await this.c.whileBusy(what, () => this.c.db.exec('VACUUM'));
          await this.c.checkpoint();
          steps.push('WAL checkpointed, VACUUM with secure_delete on (freed pages zeroed), WAL checkpointed and truncated');
        } catch (err) {
          throw translate(err, what);
        }
      }),
    );
    return steps;
  }

  private async check(needles: string[], compaction: string[]): Promise<ErasureProofReport> {
    this.c.ensureOpen();
    const files = [...FILES.map((f) => ({ ...f, path: `${this.c.location}${f.suffix}` })), ...graphFiles(this.c.location)].filter((f) => existsSync(f.path));
    // Scanned in a child process: closing a descriptor of the database file in this process would drop every
    // POSIX lock SQLite holds on it, and this connection would then stop seeing other processes' writes.
    // The needles travel on stdin, never on the command line.
    const out = execFileSync(process.execPath, ['-e', RAW_SCAN_SCRIPT, ...files.map((f) => f.path)], { input: JSON.stringify(needles), maxBuffer: 1024 * 1024 });
    const scan = JSON.parse(out.toString('utf8')) as { found: number; bytes: number[] };
    return {
      backend: 'sqlite',
      compaction,
      scanned: files.map((f, i) => ({ what: f.what, files: 1, bytes: scan.bytes[i] ?? 0 })),
      found: scan.found,
      notCovered: [
        'copies made outside this database: backups, file-system snapshots, exported JSONL',
        'erased vectors as bytes: the files are searched for the erased texts; the quantised index, every neighbour graph and the saved coarse lists are discarded instead, and a graph or lists made before the erasure are refused and never saved again',
      ],
    };
  }

  /** This part's operations inside a write transaction (the caller holds the write lock). */
  tx(): Pick<StoreTx, 'pendingErasures' | 'putPendingErasure'> {
    return {
    pendingErasures: async () => this.pendingErasuresSync(),
    putPendingErasure: async (e) => {
      this.c.stmt('INSERT OR REPLACE INTO pending_erasures (id, scope, plan, started_at) VALUES (?, ?, ?, ?)').run(
        e.id,
        JSON.stringify(e.scope),
        e.plan === null || e.plan === undefined ? null : JSON.stringify(e.plan),
        e.startedAt,
      );
    },
    };
  }
}
