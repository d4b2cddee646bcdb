import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCairnError } from '../interfaces/errors.js';
import { MEMORY_KINDS, ORIGINS } from '../interfaces/memory.js';
import {
  validateAnchors,
  MAX_NAMESPACE_LENGTH,
  MAX_TAGS,
  MAX_TEXT_BYTES,
  validateId,
  validateImportance,
  validateKind,
  validateLimit,
  validateNamespace,
  validateProvenance,
  validateRoute,
  validateTags,
  validateText,
  validateTime,
  validateTokenBudget,
  TOKEN_BUDGET_RANGE,
} from './validate.js';
import { ContextQueryInput, MemoryStoreInput } from '../surfaces/mcp/mcp-schemas.js';
import { parseConfigFile } from '../surfaces/config-file.js';

/** Asserts `fn` throws INVALID_INPUT for `field`, with a message that starts with the field name. */
function rejects(fn: () => unknown, field: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(isCairnError(err, 'INVALID_INPUT'), `expected INVALID_INPUT, got ${String(err)}`);
    assert.equal(err.field, field);
    assert.ok(err.message.startsWith(`${field}:`), err.message);
    return true;
  });
}

describe('validateNamespace', () => {
  it('accepts printable names up to the limit, unchanged', () => {
    for (const ns of ['acme/shop', 'github.com/acme/shop', '/home/ana/src/shop', 'café ünïcode 名前', 'a', 'x'.repeat(MAX_NAMESPACE_LENGTH)]) {
      assert.equal(validateNamespace(ns), ns);
    }
  });

  it('refuses empty, too long, control characters, edge whitespace and non-strings', () => {
    for (const bad of ['', 'x'.repeat(MAX_NAMESPACE_LENGTH + 1), 'acme\nshop', 'acme\u0000shop', 'acme\u001bshop', ' acme', 'acme ', 42, null, undefined]) {
      rejects(() => validateNamespace(bad), 'namespace');
    }
    rejects(() => validateNamespace('', 'default namespace'), 'default namespace');
  });
});

describe('validateText', () => {
  it('accepts text up to 32 KB of UTF-8, unchanged', () => {
    assert.equal(MAX_TEXT_BYTES, 32 * 1024);
    const ascii = 'a'.repeat(MAX_TEXT_BYTES);
    assert.equal(validateText(ascii), ascii);
    const twoByte = 'é'.repeat(MAX_TEXT_BYTES / 2); // exactly 32 KB in UTF-8
    assert.equal(validateText(twoByte), twoByte);
    assert.equal(validateText('  keep my spacing  '), '  keep my spacing  ');
  });

  it('counts bytes, not characters, and refuses more than 32 KB', () => {
    rejects(() => validateText('a'.repeat(MAX_TEXT_BYTES + 1)), 'text');
    rejects(() => validateText('é'.repeat(MAX_TEXT_BYTES / 2) + 'a'), 'text');
    rejects(() => validateText('🚀'.repeat(MAX_TEXT_BYTES / 4 + 1)), 'text');
  });

  it('refuses empty, blank, NUL and non-strings', () => {
    for (const bad of ['', '   ', '\n\t', 'a\u0000b', 42, null, undefined, ['text']]) rejects(() => validateText(bad), 'text');
  });
});

describe('validateKind', () => {
  it('accepts every kind and nothing else', () => {
    for (const kind of MEMORY_KINDS) assert.equal(validateKind(kind), kind);
    for (const bad of ['Decision', 'todo', '', null, 3]) rejects(() => validateKind(bad), 'kind');
    rejects(() => validateKind('todo', 'kinds'), 'kinds');
  });
});

describe('validateImportance', () => {
  it('accepts whole numbers 1 to 10', () => {
    for (let i = 1; i <= 10; i++) assert.equal(validateImportance(i), i);
  });

  it('refuses 0, 11, fractions, NaN, strings', () => {
    for (const bad of [0, 11, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY, '5', null]) rejects(() => validateImportance(bad), 'importance');
  });
});

describe('validateTags', () => {
  it('lower-cases, trims and de-duplicates', () => {
    assert.deepEqual(validateTags([' DB ', 'db', 'api/v2', 'ops:oncall', 'a_b.c-d']), ['db', 'api/v2', 'ops:oncall', 'a_b.c-d']);
    assert.deepEqual(validateTags([]), []);
    assert.deepEqual(validateTags(['été']), ['été']);
  });

  it(`accepts ${MAX_TAGS} tags and refuses more`, () => {
    const ten = Array.from({ length: MAX_TAGS }, (_, i) => `t${i}`);
    assert.deepEqual(validateTags(ten), ten);
    rejects(() => validateTags([...ten, 't10']), 'tags');
  });

  it('names the offending tag', () => {
    rejects(() => validateTags(['ok', 'not ok']), 'tags[1]');
    rejects(() => validateTags(['-leading']), 'tags[0]');
    rejects(() => validateTags(['']), 'tags[0]');
    rejects(() => validateTags(['x'.repeat(65)]), 'tags[0]');
    rejects(() => validateTags(['ok', 7]), 'tags[1]');
    assert.deepEqual(validateTags(['x'.repeat(64)]), ['x'.repeat(64)]);
  });

  it('refuses a non-list', () => {
    rejects(() => validateTags('db'), 'tags');
    rejects(() => validateTags(null), 'tags');
  });
});

describe('validateLimit', () => {
  it('accepts whole numbers from 1 to the maximum', () => {
    assert.equal(validateLimit(1), 1);
    assert.equal(validateLimit(200, 'limit', 200), 200);
    rejects(() => validateLimit(201, 'limit', 200), 'limit');
    for (const bad of [0, -3, 1.5, '10', null]) rejects(() => validateLimit(bad, 'tokenBudget'), 'tokenBudget');
  });
});

describe('validateTime', () => {
  it('normalises ISO-8601 dates and date-times to UTC', () => {
    assert.equal(validateTime('2026-03-04', 'createdAt'), '2026-03-04T00:00:00.000Z');
    assert.equal(validateTime('2026-03-04T10:00:00+02:00', 'createdAt'), '2026-03-04T08:00:00.000Z');
    assert.equal(validateTime('2026-03-04T08:00:00.123Z', 'expiresAt'), '2026-03-04T08:00:00.123Z');
  });

  it('refuses what is not a date, naming the field', () => {
    for (const bad of ['yesterday', '', '  ', '2026-13-45', 1_700_000_000_000, null]) rejects(() => validateTime(bad, 'expiresAt'), 'expiresAt');
  });
});

describe('validateProvenance', () => {
  it('keeps known string fields and drops null or undefined ones', () => {
    const full = { source: 'cli', trigger: 'manual', sessionId: 's1', origin: 'agent', agent: 'claude', externalId: 'e1', speaker: 'ana' };
    assert.deepEqual(validateProvenance(full), full);
    assert.deepEqual(validateProvenance({ source: 'mcp', agent: null, trigger: undefined }), { source: 'mcp' });
    assert.deepEqual(validateProvenance(undefined), {});
    assert.deepEqual(validateProvenance(null), {});
    for (const origin of ORIGINS) assert.deepEqual(validateProvenance({ origin }), { origin });
  });

  it('refuses unknown keys, bad origins, non-strings and long values, naming the key', () => {
    rejects(() => validateProvenance({ source: 'cli', password: 'x' }), 'metadata.password');
    rejects(() => validateProvenance({ origin: 'robot' }), 'metadata.origin');
    rejects(() => validateProvenance({ sessionId: 42 }), 'metadata.sessionId');
    rejects(() => validateProvenance({ agent: 'x'.repeat(513) }), 'metadata.agent');
    rejects(() => validateProvenance(['cli']), 'metadata');
    rejects(() => validateProvenance('cli'), 'metadata');
  });
});

describe('validateRoute', () => {
  it('trims the title, description and paths', () => {
    assert.deepEqual(validateRoute({ title: ' Checkout ', description: ' Tax and totals ', paths: [' shop/checkout/ ', 'shop/tax.py'] }), {
      title: 'Checkout',
      description: 'Tax and totals',
      paths: ['shop/checkout/', 'shop/tax.py'],
    });
    assert.deepEqual(validateRoute({ title: 'Docs' }), { title: 'Docs', description: '', paths: [] });
  });

  it('refuses a missing title, bad paths and non-objects', () => {
    rejects(() => validateRoute({ title: '  ', paths: [] }), 'route.title');
    rejects(() => validateRoute({ title: 'x', paths: ['ok', ''] }), 'route.paths');
    rejects(() => validateRoute({ title: 'x', paths: 'shop/' }), 'route.paths');
    rejects(() => validateRoute({ title: 'x', paths: Array.from({ length: 51 }, (_, i) => `p${i}`) }), 'route.paths');
    rejects(() => validateRoute(null), 'route');
    rejects(() => validateRoute([]), 'route');
  });
});

describe('validateId', () => {
  it('accepts a 26-character id, upper-cased', () => {
    assert.equal(validateId('01ARZ3NDEKTSV4RRFFQ69G5FAV'), '01ARZ3NDEKTSV4RRFFQ69G5FAV');
    assert.equal(validateId('01arz3ndektsv4rrffq69g5fav'), '01ARZ3NDEKTSV4RRFFQ69G5FAV');
  });

  it('refuses anything else, naming the field', () => {
    for (const bad of ['', 'nope', '01ARZ3NDEKTSV4RRFFQ69G5FA', "01ARZ3NDEKTSV4RRFFQ69G5FA'", 26, null]) rejects(() => validateId(bad, 'supersedes'), 'supersedes');
  });
});

describe('one validation source', () => {
  it('tags are counted after de-duplication: twelve times the same tag is one tag', () => {
    assert.deepEqual(validateTags(Array.from({ length: 12 }, (_, i) => (i % 2 ? 'Auth' : ' auth '))), ['auth']);
    rejects(() => validateTags(Array.from({ length: MAX_TAGS + 1 }, (_, i) => `t${i}`)), 'tags');
  });

  it('a lone surrogate is refused rather than stored as U+FFFD; a paired one is kept exactly', () => {
    rejects(() => validateText('broken \ud800 text'), 'text');
    rejects(() => validateText('broken \udc00 text'), 'text');
    assert.equal(validateText('rocket 🚀 ok'), 'rocket 🚀 ok');
  });

  it('a hole in a list is refused like any item that is not a string (a JavaScript caller can send one)', () => {
    rejects(() => validateTags([, 'billing']), 'tags[0]');
    rejects(() => validateAnchors([, 'shop/tax.py']), 'anchors[0]');
    rejects(() => validateRoute({ title: 'x', paths: [, 'shop/'] }), 'route.paths[0]');
  });

  it("the MCP schemas and the config file refuse with the core's messages", () => {
    const issue = (input: Record<string, unknown>) => {
      const r = MemoryStoreInput.safeParse({ content: 'c', category: 'fact', importance: 5, tags: [], ...input });
      return r.success ? null : [r.error.issues.length, r.error.issues[0]?.path.join('.'), r.error.issues[0]?.message];
    };
    assert.deepEqual(issue({ importance: 11 }), [1, 'importance', 'must be a whole number from 1 to 10 (got 11)']);
    assert.deepEqual(issue({ tags: [5] }), [1, 'tags.0', 'must be a string']);
    assert.deepEqual(issue({ anchors: ['shop/tax.py'] }), [1, 'anchors.0', 'must be { path, symbol?, lines? }']);
    assert.deepEqual(issue({ anchors: [{ path: 'a.py', extra: 1 }] }), [1, 'anchors.0', 'unknown field; allowed: path, symbol, lines']);
    assert.deepEqual(issue({ anchors: [{ path: 'a.py', symbol: 'a b' }] }), [1, 'anchors.0.symbol', 'must be a name of 1–200 letters, digits or _ $ . : # -']);
    assert.deepEqual(issue({ anchors: [{ path: '../a.py' }] }), [1, 'anchors.0.path', 'must be a path inside the repository, relative to its top level']);
    for (const [namespace, message] of [
      [5, 'must be a string'],
      [' padded', 'must not start or end with whitespace'],
    ] as const) {
      assert.throws(() => parseConfigFile('/c.json', { namespace }), (err: unknown) => isCairnError(err, 'INVALID_INPUT') && err.message === `config file /c.json: namespace: ${message}`);
    }
  });

  it('the MCP schema and the engine share one token-budget range', () => {
    assert.equal(validateTokenBudget(TOKEN_BUDGET_RANGE.max), TOKEN_BUDGET_RANGE.max);
    rejects(() => validateTokenBudget(1_000_000), 'tokenBudget');
    assert.equal(ContextQueryInput.safeParse({ query: 'q', token_budget: TOKEN_BUDGET_RANGE.max }).success, true);
    assert.equal(ContextQueryInput.safeParse({ query: 'q', token_budget: TOKEN_BUDGET_RANGE.max + 1 }).success, false);
    assert.equal(MemoryStoreInput.safeParse({ content: 'c', category: 'fact', importance: 11, tags: [] }).success, false);
    assert.equal(MemoryStoreInput.safeParse({ content: 'c', category: 'fact', importance: 5, tags: Array(12).fill('same') }).success, true);
  });
});
