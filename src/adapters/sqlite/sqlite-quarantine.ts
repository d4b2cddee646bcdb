import { createHash } from 'node:crypto';
import type { QuarantineEntry, QuarantineListOptions } from '../../interfaces/quarantine.js';
import { vectorBytes, vectorFromBytes } from '../../core/checksum.js';
import type { StoreTx } from '../../interfaces/store.js';
import type { SqliteConnection } from './sqlite-connection.js';

/** The quarantine: held entries, the vault of held texts, learned anchors and the anchor cache. */
export class SqliteQuarantine {
  constructor(private readonly c: SqliteConnection) {}

  private getQuarantineSync(id: string): QuarantineEntry | null {
    const r = this.c.stmt('SELECT entry FROM quarantine WHERE id = ?').get(id) as { entry: string } | undefined;
    return r ? (JSON.parse(r.entry) as QuarantineEntry) : null;
  }

  private findQuarantineByHashSync(hash: string): QuarantineEntry[] {
    const rows = this.c.stmt('SELECT entry FROM quarantine WHERE hash = ? ORDER BY id').all(hash) as { entry: string }[];
    return rows.map((r) => JSON.parse(r.entry) as QuarantineEntry);
  }

  private getQuarantineVaultSync(id: string): { text: string; request: unknown } | null {
    const r = this.c.stmt('SELECT text, request FROM quarantine_vault WHERE id = ?').get(id) as { text: string; request: string } | undefined;
    return r ? { text: r.text, request: JSON.parse(r.request) as unknown } : null;
  }

  async getQuarantine(id: string): Promise<QuarantineEntry | null> {
    return this.c.read('reading the quarantine', () => this.getQuarantineSync(id));
  }

  async listQuarantine(options: QuarantineListOptions): Promise<QuarantineEntry[]> {
    const status = options.status ?? 'held';
    const limit = options.limit ?? 50;
    return this.c.read('reading the quarantine', () => {
      const rows = (
        status === 'all'
          ? this.c.stmt('SELECT entry FROM quarantine ORDER BY id DESC LIMIT ?').all(limit)
          : this.c.stmt('SELECT entry FROM quarantine WHERE status = ? ORDER BY id DESC LIMIT ?').all(status, limit)
      ) as { entry: string }[];
      return rows.map((r) => JSON.parse(r.entry) as QuarantineEntry);
    });
  }

  async findQuarantineByHash(hash: string): Promise<QuarantineEntry[]> {
    return this.c.read('reading the quarantine', () => this.findQuarantineByHashSync(hash));
  }

  async getQuarantineVault(id: string): Promise<{ text: string; request: unknown } | null> {
    return this.c.read('reading the quarantine vault', () => this.getQuarantineVaultSync(id));
  }

  async learnedAnchors(): Promise<{ id: string; vector: Float32Array }[]> {
    return this.c.read('reading learned anchors', () =>
      (this.c.stmt('SELECT id, vector FROM learned_anchors ORDER BY id').all() as { id: string; vector: Buffer }[]).map((r) => ({
        id: r.id,
        vector: vectorFromBytes(r.vector),
      })),
    );
  }

  async getAnchorCache(key: string): Promise<Float32Array[] | null> {
    return this.c.read('reading the anchor cache', () => {
      const r = this.c.stmt('SELECT vectors FROM anchor_cache WHERE key = ?').get(key) as { vectors: Buffer } | undefined;
      if (!r || r.vectors.length < 36) return null;
      const body = r.vectors.subarray(0, r.vectors.length - 32);
      // A cache whose checksum does not match is treated as missing: the caller rebuilds it from the catalogue.
      if (!createHash('sha256').update(body).digest().equals(r.vectors.subarray(r.vectors.length - 32))) return null;
      const dims = body.readUInt32LE(0);
      if (dims === 0 || (body.length - 4) % (dims * 4) !== 0) return null;
      const out: Float32Array[] = [];
      for (let at = 4; at + dims * 4 <= body.length; at += dims * 4) out.push(vectorFromBytes(body.subarray(at, at + dims * 4)));
      return out;
    });
  }

  /** This part's operations inside a write transaction (the caller holds the write lock). */
  tx(): Pick<StoreTx, 'deleteQuarantineEntry' | 'putQuarantine' | 'getQuarantine' | 'findQuarantineByHash' | 'clearQuarantine' | 'putQuarantineVault' | 'getQuarantineVault' | 'deleteQuarantineVault' | 'putLearnedAnchor' | 'getLearnedAnchor' | 'deleteLearnedAnchor' | 'putAnchorCache'> {
    return {
    deleteQuarantineEntry: async (id) => {
      this.c.stmt('DELETE FROM quarantine WHERE id = ?').run(id);
    },
    putQuarantine: async (entry) => {
      this.c.stmt(
        `INSERT INTO quarantine (id, hash, entry, status, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, entry = excluded.entry, status = excluded.status, created_at = excluded.created_at`,
      ).run(entry.id, entry.hash, JSON.stringify(entry), entry.status, entry.createdAt);
    },
    getQuarantine: async (id) => this.getQuarantineSync(id),
    findQuarantineByHash: async (hash) => this.findQuarantineByHashSync(hash),
    clearQuarantine: async () => {
      this.c.stmt('DELETE FROM quarantine').run();
    },
    putQuarantineVault: async (id, text, request) => {
      this.c.stmt('INSERT OR REPLACE INTO quarantine_vault (id, text, request) VALUES (?, ?, ?)').run(id, text, JSON.stringify(request));
    },
    getQuarantineVault: async (id) => this.getQuarantineVaultSync(id),
    deleteQuarantineVault: async (id) => {
      this.c.stmt('DELETE FROM quarantine_vault WHERE id = ?').run(id);
    },
    putLearnedAnchor: async (id, vector, at) => {
      this.c.stmt('INSERT OR REPLACE INTO learned_anchors (id, vector, created_at) VALUES (?, ?, ?)').run(id, vectorBytes(vector), at);
    },
    getLearnedAnchor: async (id) => {
      const r = this.c.stmt('SELECT vector FROM learned_anchors WHERE id = ?').get(id) as { vector: Buffer } | undefined;
      return r ? vectorFromBytes(r.vector) : null;
    },
    deleteLearnedAnchor: async (id) => {
      this.c.stmt('DELETE FROM learned_anchors WHERE id = ?').run(id);
    },
    putAnchorCache: async (key, vectors) => {
      const dims = vectors[0]?.length ?? 0;
      const body = Buffer.alloc(4 + vectors.length * dims * 4);
      body.writeUInt32LE(dims, 0);
      vectors.forEach((v, i) => vectorBytes(v).copy(body, 4 + i * dims * 4));
      // A SHA-256 trailer: a flipped page in this blob would silently move the filter's anchors.
      const buf = Buffer.concat([body, createHash('sha256').update(body).digest()]);
      this.c.stmt('INSERT OR REPLACE INTO anchor_cache (key, vectors) VALUES (?, ?)').run(key, buf);
    },
    };
  }
}
