import { CairnError } from '../../interfaces/errors.js';
import type { Embedder } from '../../interfaces/embedder.js';
import { normalise } from '../embed-use/use-embedder.js';

export interface HttpEmbedderConfig {
  /** Base URL of an OpenAI-compatible API, e.g. `https://api.openai.com/v1` or a local server. */
  baseUrl: string;
  model: string;
  /** Sent as a bearer token when set. */
  apiKey?: string | undefined;
  /** Vector size of the model; asked of the server on first use when omitted. */
  dimensions: number;
  batchSize?: number;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** An embedder that calls `POST {baseUrl}/embeddings` of any OpenAI-compatible server. */
export class HttpEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  private readonly config: HttpEmbedderConfig;

  constructor(config: HttpEmbedderConfig) {
    if (!/^https?:\/\//u.test(config.baseUrl)) throw new CairnError('INVALID_INPUT', `embedder base URL must start with http:// or https:// (got ${config.baseUrl})`);
    if (!config.model) throw new CairnError('INVALID_INPUT', 'embedder model must be set');
    if (!Number.isInteger(config.dimensions) || config.dimensions < 1) throw new CairnError('INVALID_INPUT', 'embedder dimensions must be a positive integer');
    this.config = config;
    this.id = `openai-compatible:${config.model}`;
    this.dimensions = config.dimensions;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    const size = this.config.batchSize ?? 64;
    for (let i = 0; i < texts.length; i += size) out.push(...(await this.call(texts.slice(i, i + size))));
    return out;
  }

  private async call(input: string[]): Promise<Float32Array[]> {
    const f = this.config.fetch ?? fetch;
    const url = `${this.config.baseUrl.replace(/\/+$/u, '')}/embeddings`;
    let res: Response;
    try {
      res = await f(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.config.apiKey ? { authorization: `Bearer ${this.config.apiKey}` } : {}) },
        body: JSON.stringify({ model: this.config.model, input }),
        signal: AbortSignal.timeout(this.config.timeoutMs ?? 30_000),
      });
    } catch (err) {
      throw new CairnError('EMBEDDER_UNAVAILABLE', `embedding server ${url} unreachable: ${(err as Error).message}`, { cause: err });
    }
    if (!res.ok) {
      const body = (await res.text().catch(() => '')).slice(0, 300);
      throw new CairnError('EMBEDDER_UNAVAILABLE', `embedding server answered ${res.status}: ${body}`);
    }
    const json = (await res.json()) as { data?: { embedding: number[]; index?: number }[] };
    if (!Array.isArray(json.data) || json.data.length !== input.length) {
      throw new CairnError('EMBEDDER_UNAVAILABLE', `embedding server returned ${json.data?.length ?? 'no'} vectors for ${input.length} texts`);
    }
    const sorted = [...json.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return sorted.map((d) => {
      if (!Array.isArray(d.embedding) || d.embedding.length !== this.dimensions) {
        throw new CairnError('EMBEDDER_MISMATCH', `embedding server returned ${d.embedding?.length} dimensions; configured ${this.dimensions}`);
      }
      return normalise(Float32Array.from(d.embedding));
    });
  }

  loadTimeMs(): number | null {
    return 0;
  }
}

export function createHttpEmbedder(config: HttpEmbedderConfig): HttpEmbedder {
  return new HttpEmbedder(config);
}
