import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isCairnError } from '../interfaces/errors.js';
import { SECRET_SAMPLES } from '../../test/fixtures/secret-samples.js';
import { applyRedaction, DEFAULT_REDACTION_CONFIG, parseAllowEntry, redact, type RedactionConfig } from './redact.js';

describe('redaction', () => {
  for (const sample of SECRET_SAMPLES) {
    it(`replaces a ${sample.kind} with its placeholder`, () => {
      const r = redact(sample.text(sample.secret));
      assert.ok(!r.text.includes(sample.secret), r.text);
      assert.ok(r.text.includes(`[REDACTED:${sample.kind}]`), r.text);
      assert.equal(r.counts[sample.kind], 1);
    });
  }

  it('leaves ordinary engineering notes alone', () => {
    for (const text of [
      'We use sha256 and utf8 everywhere; PORT=8080 and password_min_length: 12.',
      'The password is reset via the admin page; token: refreshed hourly; auth: handled by middleware.',
      'commit 3f9a2b1c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a fixed the token refresh',
      'Set SECRET_KEY=${SECRET_KEY} and API_KEY=<your-key>; password: process.env.DB_PASS',
      'Order 1234567890123 shipped; tokens: 4096 per request; retry after 30s.',
      'Use Bearer tokens for the public API and Basic auth only for the admin page.',
    ]) {
      const r = redact(text);
      assert.deepEqual(r.counts, {}, text);
      assert.equal(r.text, text);
    }
  });

  it('finds the secret after a long run the key and URL detectors start in at every word, and keys inside runs', () => {
    // Before the key detector took each run at once and URL schemes were bounded, these runs cost 0.4–2.5 s each.
    for (const run of ['x'.repeat(32_000), 'token.'.repeat(5_000), 'a-'.repeat(15_000), 'a.'.repeat(15_000), 'password'.repeat(3_500)]) {
      const r = redact(`${run} DB_PASSWORD=Gr33nTea9Pot and postgres://app:S3cretPw9@db.internal:5432/app`);
      assert.ok(!r.text.includes('Gr33nTea9Pot') && !r.text.includes('S3cretPw9'), `after ${run.slice(0, 12)}…: ${r.text.slice(-120)}`);
      assert.ok(r.text.startsWith(run), 'the run itself is left alone');
    }
    for (const [text, secret] of [
      ['config: my-db.password=Hunter2xyz9', 'Hunter2xyz9'],
      ['"client_secret": "q8W2e7R1t5Y3"', 'q8W2e7R1t5Y3'],
      ['export STRIPE_WEBHOOK_SECRET_V2=wh7Kd9Lm2Qp4', 'wh7Kd9Lm2Qp4'],
    ] as const) {
      const r = redact(text);
      assert.ok(!r.text.includes(secret), `${text} → ${r.text}`);
    }
  });

  it('is idempotent: placeholders are not redacted again', () => {
    const once = redact(SECRET_SAMPLES.map((s) => s.text(s.secret)).join('\n'));
    const twice = redact(once.text);
    assert.equal(twice.text, once.text);
    assert.deepEqual(twice.counts, {});
  });

  it('mode off changes nothing; reject throws INVALID_INPUT naming the kind, never the secret', () => {
    const sample = SECRET_SAMPLES.find((s) => s.kind === 'github-token')!;
    const text = sample.text(sample.secret);
    assert.equal(redact(text, { ...DEFAULT_REDACTION_CONFIG, mode: 'off' }).text, text);
    const reject: RedactionConfig = { ...DEFAULT_REDACTION_CONFIG, mode: 'reject' };
    assert.throws(
      () => applyRedaction(text, reject, 'text', {}),
      (err: unknown) => isCairnError(err, 'INVALID_INPUT') && err.message.includes('github-token') && !err.message.includes(sample.secret),
    );
  });

  it('keeps allow-listed findings (exact strings and regexes)', () => {
    const aws = SECRET_SAMPLES.find((s) => s.kind === 'aws-access-key')!;
    const gh = SECRET_SAMPLES.find((s) => s.kind === 'github-token')!;
    const text = `${aws.text(aws.secret)} and ${gh.text(gh.secret)}`;
    const exact = redact(text, { ...DEFAULT_REDACTION_CONFIG, allowExact: [aws.secret] });
    assert.ok(exact.text.includes(aws.secret));
    assert.ok(!exact.text.includes(gh.secret));
    const pattern = parseAllowEntry('/^ghp_/');
    assert.ok(pattern.pattern);
    const byRegex = redact(text, { ...DEFAULT_REDACTION_CONFIG, allowPatterns: [pattern.pattern] });
    assert.ok(byRegex.text.includes(gh.secret));
    assert.ok(!byRegex.text.includes(aws.secret));
    assert.deepEqual(parseAllowEntry('plain'), { exact: 'plain' });
  });

  it('e-mail addresses and phone numbers are redacted only when switched on', () => {
    const text = 'ask alice@example.com or call +1 415 555 0100';
    assert.deepEqual(redact(text).counts, {});
    const on = redact(text, { ...DEFAULT_REDACTION_CONFIG, enable: ['email', 'phone'] });
    assert.equal(on.text, 'ask [REDACTED:email] or call [REDACTED:phone]');
  });
});

describe('redaction of disguised secrets', () => {
  const disguised: [string, string, string][] = [
    ['an AWS key with a zero-width space inside', 'The CI key is AKIA\u200bIOSFODNN7EXAMPLE for staging', 'aws-access-key'],
    ['a password after the bare word', 'Log in with password Gr33nTea!Pot on the box', 'password'],
    ['a pw: value', 'pw: Summer2024!x', 'password'],
    ['a full-width Stripe key', 'Stripe: ｓｋ＿ｌｉｖｅ＿４ｅＣ３９ＨｑＬｙｊＷＤａｒｊｔＴ１ｚｄｐ７ｄｃ done', 'stripe-key'],
    ['a Stripe key split by a newline', 'key sk_live_4eC39HqLyj\nWDarjtT1zdp7dc in the env', 'stripe-key'],
  ];
  for (const [what, text, kind] of disguised) {
    it(`finds ${what}`, () => {
      const r = redact(text);
      assert.equal(r.counts[kind], 1, r.text);
      assert.ok(r.text.includes(`[REDACTED:${kind}]`), r.text);
      for (const piece of ['IOSFODNN7EXAMPLE', 'Gr33nTea', 'Summer2024', '４ｅＣ３９', 'WDarjtT1zdp7dc']) assert.ok(!r.text.includes(piece), r.text);
    });
  }

  it('finds a key split by a line break and one behind a zero-width space after long runs of line breaks, short lines and combining marks', () => {
    // Before the view was built once per change and each run of breaks scanned once, 32 KB of newlines took 24 s.
    for (const run of ['\n'.repeat(30_000), '\r\n'.repeat(15_000), 'run the tests\n'.repeat(2_000), 'a\u0301\u0302'.repeat(9_000)]) {
      const r = redact(`${run}key sk_live_4eC39HqLyj\nWDarjtT1zdp7dc in the env; the CI key is AKIA\u200bIOSFODNN7EXAMPLE`);
      assert.equal(r.counts['stripe-key'], 1, r.text.slice(-160));
      assert.equal(r.counts['aws-access-key'], 1, r.text.slice(-160));
      assert.ok(r.text.startsWith(run), 'the run itself is left alone');
    }
  });

  it('the word password alone, and ordinary unicode and line breaks, are left alone', () => {
    for (const text of [
      'We need a password manager for the team.',
      'The password policy requires 12 characters.',
      'Password rotation happens every 90 days.',
      'pw reset link expires in 24h',
      'Line one\nline two with words',
      'Ünïcödé text stays as it is: café, naïve, ｆｕｌｌ-width words too',
    ]) assert.deepEqual(redact(text), { text, counts: {} }, text);
  });
});
