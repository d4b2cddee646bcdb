/**
 * The layer order of ARCHITECTURE.md, kept true by reading the imports: interfaces → core → adapters →
 * surfaces, each layer importing only from itself and the layers to its left. Unit tests beside the code are
 * exempt (they compose real adapters on purpose); everything that ships is not.
 */
import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SRC = join(ROOT, 'src');
const ORDER = ['interfaces', 'core', 'adapters', 'surfaces'] as const;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [p] : [];
  });
}

/** The layer of a path under src/, or null for src/index.ts and anything outside. */
function layerOf(path: string): number | null {
  const first = relative(SRC, path).split(sep)[0] ?? '';
  const i = (ORDER as readonly string[]).indexOf(first);
  return i >= 0 ? i : null;
}

describe('the layer order', () => {
  it('no shipped file imports from a layer to its right', () => {
    const files = sources(SRC);
    assert.ok(files.length > 50, `read the sources (${files.length} files)`);
    const wrong: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      if (from === null) continue;
      for (const m of readFileSync(file, 'utf8').matchAll(/(?:\bfrom|\bimport\()\s*['"](\.{1,2}\/[^'"]+)['"]/gu)) {
        const target = normalize(join(dirname(file), m[1]!));
        const to = layerOf(target);
        if (to === null && !target.startsWith(SRC)) wrong.push(`${relative(ROOT, file)} imports ${m[1]} from outside src/`);
        else if (to !== null && to > from) wrong.push(`${relative(ROOT, file)} (${ORDER[from]}) imports ${m[1]} (${ORDER[to]})`);
      }
    }
    assert.deepEqual(wrong, []);
  });
});
