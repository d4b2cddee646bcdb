import { CairnError } from '../../interfaces/errors.js';
import { vectorFromBytes } from '../../core/checksum.js';
import type { EventInput, ScopeInfo, SnapshotRecord, StoredEvent, StoreTx } from '../../interfaces/store.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { rowToEvent, rowToSnapshot, type Row } from '../sql/sql-rows.js';

/** The event log, snapshots, namespace settings and content-addressed vector blobs. */
export class SqliteLog {
  constructor(private readonly c: SqliteConnection) {}

  private getVectorBlobSync(hash: string): Float32Array | null {
    const r = this.c.stmt('SELECT data FROM vector_blobs WHERE hash = ?').get(hash) as { data: Buffer } | undefined;
    return r ? vectorFromBytes(r.data) : null;
  }

  private listSettingsSync(namespace: string): { key: string; value: unknown }[] {
    const rows = this.c.stmt('SELECT key, value FROM settings WHERE namespace = ? ORDER BY key').all(namespace) as { key: string; value: string }[];
    return rows.map((r) => ({ key: r.key, value: JSON.parse(r.value) as unknown }));
  }

  private getSnapshotSync(scope: string): SnapshotRecord | null {
    const r = this.c.stmt('SELECT * FROM snapshots WHERE scope = ?').get(scope) as Row | undefined;
    return r ? rowToSnapshot(r) : null;
  }

  private snapshotHeadSync(scope: string): { version: number; seq: number } | null {
    return (this.c.stmt('SELECT version, seq FROM snapshots WHERE scope = ?').get(scope) as { version: number; seq: number } | undefined) ?? null;
  }

  async getVectorBlob(hash: string): Promise<Float32Array | null> {
    return this.c.read('reading a vector', () => this.getVectorBlobSync(hash));
  }

  async listSettings(namespace: string): Promise<{ key: string; value: unknown }[]> {
    return this.c.read('reading settings', () => this.listSettingsSync(namespace));
  }

  async getSnapshot(scope: string): Promise<SnapshotRecord | null> {
    return this.c.read('reading a snapshot', () => this.getSnapshotSync(scope));
  }

  async *iterateEvents(afterGseq = 0, pageSize = 1000): AsyncIterable<StoredEvent[]> {
    let after = afterGseq;
    for (;;) {
      const page = this.c.read('reading the event log', () =>
        (this.c.stmt('SELECT * FROM events WHERE gseq > ? ORDER BY gseq LIMIT ?').all(after, pageSize) as Row[]).map(rowToEvent),
      );
      if (page.length === 0) return;
      after = (page[page.length - 1] as StoredEvent).gseq;
      yield page;
    }
  }

  async scopes(): Promise<ScopeInfo[]> {
    return this.c.read('reading the event log', () =>
      this.c.stmt('SELECT namespace AS scope, COUNT(*) AS events, MAX(seq) AS lastSeq FROM events GROUP BY namespace ORDER BY namespace').all() as ScopeInfo[],
    );
  }

  async getSetting(namespace: string, key: string): Promise<unknown> {
    return this.c.read('reading a setting', () => {
      const row = this.c.stmt('SELECT value FROM settings WHERE namespace = ? AND key = ?').get(namespace, key) as { value: string } | undefined;
      return row ? (JSON.parse(row.value) as unknown) : null;
    });
  }

  async events(namespace: string, afterSeq = 0, limit = 1000): Promise<StoredEvent[]> {
    return this.c.read('reading events', () => {
      const rows = this.c.stmt('SELECT * FROM events WHERE namespace = ? AND seq > ? ORDER BY seq LIMIT ?')
        .all(namespace, afterSeq, limit) as Row[];
      return rows.map(rowToEvent);
    });
  }

  async countLiveEventsOf(memoryIds: string[], namespace: string | null): Promise<number> {
    return this.c.read('counting events', () => {
      let n = 0;
      if (namespace !== null) {
        n += (this.c.stmt(`SELECT COUNT(*) AS n FROM events WHERE namespace = ? AND type != 'erased'`).get(namespace) as { n: number }).n;
      }
      const byId = this.c.stmt(`SELECT COUNT(*) AS n FROM events WHERE memory_id = ? AND type != 'erased'`);
      for (const id of memoryIds) n += (byId.get(id) as { n: number }).n;
      return n;
    });
  }

  /** This part's operations inside a write transaction (the caller holds the write lock). */
  tx(): Pick<StoreTx, 'appendEvent' | 'lastSeq' | 'countEvents' | 'getSnapshot' | 'snapshotHead' | 'putSnapshot' | 'deleteSnapshot' | 'rewriteEvent' | 'setSetting' | 'settingsOf' | 'putVectorBlob' | 'getVectorBlob' | 'vectorBlobReferenced' | 'deleteVectorBlob'> {
    return {
    appendEvent: async (event: EventInput) => {
      const { next } = this.c.stmt('SELECT COALESCE(MAX(seq), 0) + 1 AS next FROM events WHERE namespace = ?').get(event.namespace) as { next: number };
      this.c.stmt('INSERT INTO events (namespace, seq, type, memory_id, payload, at) VALUES (?, ?, ?, ?, ?, ?)').run(
        event.namespace,
        next,
        event.type,
        event.memoryId,
        JSON.stringify(event.payload ?? null),
        event.at,
      );
      return next;
    },
    lastSeq: async (scope) => (this.c.stmt('SELECT COALESCE(MAX(seq), 0) AS n FROM events WHERE namespace = ?').get(scope) as { n: number }).n,
    countEvents: async (scope, type) =>
      (this.c.stmt('SELECT COUNT(*) AS n FROM events WHERE namespace = ? AND type = ?').get(scope, type) as { n: number }).n,
    getSnapshot: async (scope) => this.getSnapshotSync(scope),
    snapshotHead: async (scope) => this.snapshotHeadSync(scope),
    putSnapshot: async (snap, expectedVersion) => {
      const have = this.snapshotHeadSync(snap.scope)?.version ?? null;
      if (have !== expectedVersion) {
        throw new CairnError('CONFLICT', `snapshot of scope ${JSON.stringify(snap.scope)} is at version ${have ?? 'none'}, expected ${expectedVersion ?? 'none'}: another writer checkpointed first`);
      }
      const version = (have ?? 0) + 1;
      this.c.stmt(
        `INSERT INTO snapshots (scope, version, seq, blob, blob_sha256, checksum, engine_version, created_at)
         VALUES (@scope, @version, @seq, @blob, @blob_sha256, @checksum, @engine_version, @created_at)
         ON CONFLICT (scope) DO UPDATE SET version = excluded.version, seq = excluded.seq, blob = excluded.blob,
           blob_sha256 = excluded.blob_sha256, checksum = excluded.checksum, engine_version = excluded.engine_version,
           created_at = excluded.created_at`,
      ).run({
        scope: snap.scope,
        version,
        seq: snap.seq,
        blob: Buffer.from(snap.blob),
        blob_sha256: snap.blobSha256,
        checksum: snap.checksum,
        engine_version: snap.engineVersion,
        created_at: snap.createdAt,
      });
      return version;
    },
    deleteSnapshot: async (scope) => {
      this.c.stmt('DELETE FROM snapshots WHERE scope = ?').run(scope);
    },
    rewriteEvent: async (scope, seq, type, payload) => {
      this.c.stmt('UPDATE events SET type = ?, payload = ?, memory_id = NULL WHERE namespace = ? AND seq = ?').run(type, JSON.stringify(payload), scope, seq);
    },
    setSetting: async (namespace, key, value) => {
      this.c.stmt('INSERT INTO settings (namespace, key, value) VALUES (?, ?, ?) ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value').run(
        namespace,
        key,
        JSON.stringify(value),
      );
    },
    settingsOf: async (namespace) => this.listSettingsSync(namespace),
    putVectorBlob: async (hash, vector) => {
      this.c.stmt('INSERT OR IGNORE INTO vector_blobs (hash, data) VALUES (?, ?)').run(hash, Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength));
    },
    getVectorBlob: async (hash) => this.getVectorBlobSync(hash),
    vectorBlobReferenced: async (hash) =>
      this.c.stmt('SELECT 1 FROM vector_refs WHERE hash = ? AND events > 0').get(hash) !== undefined ||
      this.c.stmt('SELECT 1 FROM memories WHERE vector_hash = ? LIMIT 1').get(hash) !== undefined,
    deleteVectorBlob: async (hash) => {
      this.c.stmt('DELETE FROM vector_blobs WHERE hash = ?').run(hash);
    },
    };
  }
}
