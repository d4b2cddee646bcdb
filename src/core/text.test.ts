import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dedupeKey, namespaceFromRepository, normaliseText, sha256Hex } from './text.js';

describe('normaliseText', () => {
  it('folds case, Unicode compatibility forms and whitespace, and drops trailing sentence punctuation', () => {
    assert.equal(normaliseText('  Use   PNPM\tfor\n installs.  '), 'use pnpm for installs');
    assert.equal(normaliseText('Ｕｓｅ pnpm'), 'use pnpm');
    assert.equal(normaliseText('done!;, .'), 'done');
    assert.equal(normaliseText('e\u0301'), normaliseText('\u00e9'), 'composed and decomposed accents are one form');
  });

  it('keeps what changes the meaning', () => {
    assert.notEqual(normaliseText('Is it cached?'), normaliseText('Is it cached'));
    assert.notEqual(normaliseText('v1.2'), normaliseText('v12'));
    assert.notEqual(normaliseText('a-b'), normaliseText('a b'));
    assert.equal(normaliseText('...leading dots stay'), '...leading dots stay');
  });
});

describe('dedupeKey', () => {
  it('is the same for texts with the same normal form, in the same namespace', () => {
    const k = dedupeKey('acme/shop', 'Prices are stored in cents.');
    assert.match(k, /^[0-9a-f]{64}$/);
    assert.equal(dedupeKey('acme/shop', '  prices ARE stored in cents '), k);
    assert.equal(dedupeKey('acme/shop', 'Prices are stored\nin cents!'), k);
  });

  it('differs across namespaces and texts', () => {
    const k = dedupeKey('acme/shop', 'Prices are stored in cents');
    assert.notEqual(dedupeKey('acme/blog', 'Prices are stored in cents'), k);
    assert.notEqual(dedupeKey('acme/shop', 'Prices are stored in dollars'), k);
    assert.notEqual(dedupeKey('Acme/Shop', 'Prices are stored in cents'), k, 'namespaces are not case-folded');
  });

  it('cannot be forged by moving characters between namespace and text', () => {
    assert.notEqual(dedupeKey('ab', 'c'), dedupeKey('a', 'bc'));
    assert.notEqual(dedupeKey('a b', 'c'), dedupeKey('a', 'b c'));
  });

  it('is SHA-256 of namespace, NUL and the normal form', () => {
    assert.equal(dedupeKey('acme/shop', ' Hello  World. '), sha256Hex('acme/shop\0hello world'));
  });
});

describe('namespaceFromRepository', () => {
  const forms = [
    'git@github.com:acme/shop.git',
    'git@github.com:acme/shop',
    'github.com:acme/shop.git',
    'https://github.com/acme/shop.git',
    'https://github.com/acme/shop',
    'https://github.com/acme/shop/',
    'https://github.com/acme/shop.git/',
    'http://github.com/acme/shop.git',
    'https://ana@github.com/acme/shop.git',
    'https://ana:s3cr3t-p4ss@github.com/acme/shop.git',
    'https://x-access-token:ghp_abcdefSECRET123@github.com/acme/shop.git',
    'https://ghp_abcdefSECRET123@github.com/acme/shop',
    'ssh://git@github.com/acme/shop.git',
    'ssh://github.com/acme/shop',
    'git://github.com/acme/shop.git',
    'git+ssh://git@github.com/acme/shop.git',
    'HTTPS://GitHub.com/Acme/Shop.git',
    '  git@github.com:acme/shop.git\n',
  ];
  for (const originUrl of forms) {
    it(`${JSON.stringify(originUrl)} → github.com/acme/shop`, () => {
      const ns = namespaceFromRepository({ originUrl, topLevel: '/home/ana/src/shop' });
      assert.equal(ns, 'github.com/acme/shop');
    });
  }

  it('never keeps credentials', () => {
    for (const originUrl of forms) {
      const ns = namespaceFromRepository({ originUrl }) ?? '';
      assert.doesNotMatch(ns, /secret|s3cr3t|ana|token|@/iu, `${originUrl} → ${ns}`);
    }
  });

  it('keeps nested groups and other hosts, with their user stripped', () => {
    assert.equal(namespaceFromRepository({ originUrl: 'deploy@gitlab.example.com:group/sub/repo.git' }), 'gitlab.example.com/group/sub/repo');
    assert.equal(namespaceFromRepository({ originUrl: 'https://gitlab.example.com/group/sub/repo.git' }), 'gitlab.example.com/group/sub/repo');
    assert.equal(namespaceFromRepository({ originUrl: 'ssh://git@gitlab.example.com/group/sub/repo.git' }), 'gitlab.example.com/group/sub/repo');
  });

  it('does not strip .git from the middle of a name', () => {
    assert.equal(namespaceFromRepository({ originUrl: 'https://github.com/acme/shop.github.io.git' }), 'github.com/acme/shop.github.io');
    assert.equal(namespaceFromRepository({ originUrl: 'https://github.com/acme/my.gitops' }), 'github.com/acme/my.gitops');
  });

  it('a local origin path loses only .git', () => {
    assert.equal(namespaceFromRepository({ originUrl: '/srv/git/shop.git' }), '/srv/git/shop');
    assert.equal(namespaceFromRepository({ originUrl: 'file:///srv/git/shop.git' }), '/srv/git/shop');
  });

  it('without an origin, the top-level path; without either, null', () => {
    assert.equal(namespaceFromRepository({ originUrl: null, topLevel: '/home/ana/src/shop' }), '/home/ana/src/shop');
    assert.equal(namespaceFromRepository({ originUrl: '   ', topLevel: ' /home/ana/src/shop\n' }), '/home/ana/src/shop');
    assert.equal(namespaceFromRepository({}), null);
    assert.equal(namespaceFromRepository({ originUrl: '', topLevel: '' }), null);
  });
});
