import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Memory } from '../interfaces/memory.js';
import { CanonicalText, canonicalJson, memoryJson, memoryLine } from './checksum.js';

const memory: Memory = {
  id: '01JD0000000000000000000000',
  namespace: 'acme/shop',
  text: 'VAT is rounded per invoice line — "never" on the total.\n',
  kind: 'decision',
  importance: 7,
  tags: ['tax', 'ünïcode'],
  taskId: null,
  metadata: { source: 'turn', sessionId: 's1', speaker: 'user' } as Memory['metadata'],
  route: null,
  createdAt: '2026-12-01T10:00:00.000Z',
  updatedAt: '2026-12-01T10:00:00.000Z',
  expiresAt: null,
  supersedes: null,
  supersededBy: null,
  forgottenAt: null,
  forgetReason: null,
  dedupeKey: 'k1',
  feedback: { useful: 2, wrong: 0, stale: 1 } as Memory['feedback'],
};

describe('canonical JSON', () => {
  it('sorts keys by code unit, drops undefined members, writes undefined array items as null', () => {
    assert.equal(canonicalJson({ b: 1, a: [3, undefined, { z: 'x', y: null, w: undefined }], B: true, é: 'é' }), '{"B":true,"a":[3,null,{"y":null,"z":"x"}],"b":1,"é":"é"}');
    assert.equal(canonicalJson(undefined), 'null');
    assert.equal(canonicalJson('a"b'), '"a\\"b"');
  });

  it('copies text written beforehand verbatim', () => {
    assert.equal(canonicalJson({ b: new CanonicalText('{"x":1}'), a: 2 }), '{"a":2,"b":{"x":1}}');
  });

  it('serialises a memory once into the same line and snapshot entry as the general path', () => {
    for (const m of [memory, { ...memory, feedback: undefined, code: { files: ['src/tax.py'], commit: 'abc' } } as unknown as Memory]) {
      for (const hash of ['ab12', null]) {
        const { line, entry } = memoryJson(m, hash);
        assert.equal(line, canonicalJson({ ...m, vectorHash: hash }));
        assert.equal(line, memoryLine(m, hash));
        assert.equal(entry, canonicalJson({ memory: m, vectorHash: hash }));
        assert.deepEqual(JSON.parse(line), JSON.parse(JSON.stringify({ ...m, vectorHash: hash })));
      }
    }
  });
});
