/**
 * Secrets in disguise, through the real bin into a real file: a zero-width space inside an AWS key, a
 * password after the bare word, `pw:`, a full-width Stripe key, a key split by a newline. None of them
 * reaches the database's bytes.
 */
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { BIN, NO_MODEL, useSandbox } from './mcp-scenario.js';

const SAID = [
  ['The CI key is AKIA\u200bIOSFODNN7EXAMPLE for staging', 'IOSFODNN7EXAMPLE'],
  ['Log in to the build box with password Gr33nTea!Pot before deploying', 'Gr33nTea!Pot'],
  ['Staging admin pw: Summer2024!x until the rotation', 'Summer2024!x'],
  ['The payments key is ｓｋ＿ｌｉｖｅ＿４ｅＣ３９ＨｑＬｙｊＷＤａｒｊｔＴ１ｚｄｐ７ｄｃ for now', 'ＷＤａｒｊｔ'],
  ['The webhook uses sk_live_4eC39HqLyj\nWDarjtT1zdp7dc in the env file', 'WDarjtT1zdp7dc'],
] as const;

describe('disguised secrets through cairn save', () => {
  const sandbox = useSandbox('redaction-forms', NO_MODEL);

  it('are redacted before they reach the file', () => {
    for (const [text] of SAID) {
      const r = spawnSync(process.execPath, [BIN, 'save', text, '--namespace', 'forms', '--db', sandbox.db], { cwd: sandbox.cwd, env: sandbox.env, encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    }
    const bytes = Buffer.concat([sandbox.db, `${sandbox.db}-wal`].filter((p) => existsSync(p)).map((p) => readFileSync(p)));
    for (const [text, secret] of SAID) assert.ok(!bytes.includes(Buffer.from(secret, 'utf8')), `stored verbatim: ${JSON.stringify(text)}`);
    const list = spawnSync(process.execPath, [BIN, 'list', '--namespace', 'forms', '--json', '--db', sandbox.db], { cwd: sandbox.cwd, env: sandbox.env, encoding: 'utf8' });
    const texts = (JSON.parse(list.stdout) as { memories: { text: string }[] }).memories.map((m) => m.text);
    assert.equal(texts.length, SAID.length);
    assert.ok(texts.every((t) => t.includes('[REDACTED:')), texts.join('\n'));
  });
});
