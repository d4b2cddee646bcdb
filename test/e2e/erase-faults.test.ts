/**
 * Erasure faults, against the real bin and real files. An erasure killed after its transaction commits and
 * before compaction and checks finish: the re-run of the same `cairn erase` finishes it against the original
 * texts (its certificate counts what was erased and checks every erased string), and no byte of the erased
 * texts is left. A text erased from one namespace that another namespace also holds: the byte check looks
 * only for what no remaining memory holds, so the certificate is valid.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { BIN, cli, createSandbox, type Sandbox } from './mcp-scenario.js';

const NS = 'resume/x';
const TEXTS = Array.from({ length: 40 }, (_, i) => `Confidential customer record ${i}: Mrs Example ${i} lives at ${i} Sample Street`);

function fileBytes(db: string): Buffer {
  return Buffer.concat([db, `${db}-wal`, `${db}-shm`].filter((p) => existsSync(p)).map((p) => readFileSync(p)));
}

describe('an erasure interrupted by SIGKILL', { concurrency: false }, () => {
  let sandbox: Sandbox;
  const key = () => join(sandbox.dir, 'erase.pem');
  const pub = () => join(sandbox.dir, 'erase.pub.pem');

  before(async () => {
    sandbox = createSandbox('erase-resume');
    sandbox.env['CAIRN_EMBEDDER'] = 'none';
    const keys = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    writeFileSync(key(), keys.privateKey);
    writeFileSync(pub(), keys.publicKey);
    writeFileSync(join(sandbox.dir, 'seed.jsonl'), `${TEXTS.map((text) => JSON.stringify({ text, namespace: NS })).join('\n')}\n`);
    const imported = await cli(sandbox, ['import', join(sandbox.dir, 'seed.jsonl')]);
    assert.equal(imported.code, 0, imported.stderr);
  });

  after(() => sandbox.remove());

  it('is finished by the re-run against the original texts', async () => {
    // A reader holding an old snapshot keeps the erased pages in the files: the erasing transaction commits,
    // but compaction cannot finish, so the kill lands between the two.
    const reader = new Database(sandbox.db, { readonly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT COUNT(*) AS n FROM memories').get();
    const watcher = new Database(sandbox.db, { readonly: true });
    const child = spawn(process.execPath, [BIN, 'erase', '--namespace', NS, '--key', key(), '--out', join(sandbox.dir, 'first.json'), '--db', sandbox.db], { cwd: sandbox.cwd, env: sandbox.env, stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { n } = watcher.prepare(`SELECT COUNT(*) AS n FROM events WHERE type = 'erased'`).get() as { n: number };
      if (n > 0) break;
      assert.ok(Date.now() < deadline, 'the erasing transaction committed');
      await new Promise((r) => setTimeout(r, 2));
    }
    child.kill('SIGKILL');
    await exited;
    reader.exec('COMMIT');
    reader.close();
    watcher.close();
    assert.ok(!existsSync(join(sandbox.dir, 'first.json')), 'the first run was killed before its certificate');
    const bytes = fileBytes(sandbox.db);
    assert.ok(TEXTS.some((t) => bytes.includes(t)), 'the kill left copies of the erased text in the files');

    const again = await cli(sandbox, ['erase', '--namespace', NS, '--key', key(), '--out', join(sandbox.dir, 'cert.json')]);
    assert.equal(again.code, 0, `${again.stdout}${again.stderr}`);
    const cert = (JSON.parse(readFileSync(join(sandbox.dir, 'cert.json'), 'utf8')) as { certificate: { counts: Record<string, number>; checks: { name: string; passed: boolean; detail: string }[] } }).certificate;
    assert.equal(cert.counts['memories'], TEXTS.length, 'the certificate counts what the interrupted run erased');
    const fileCheck = cert.checks.find((c) => c.name === 'file-bytes');
    assert.match(fileCheck?.detail ?? '', new RegExp(`^0 of ${TEXTS.length} erased strings`, 'u'), 'every original text was looked for');
    assert.ok(cert.checks.every((c) => c.passed), JSON.stringify(cert.checks));
    const after = fileBytes(sandbox.db);
    for (const t of TEXTS) assert.ok(!after.includes(t), `no copy of ${JSON.stringify(t)} is left`);
    assert.ok(!after.includes(Buffer.from(TEXTS[0] as string).toString('base64')), 'nor of the record the re-run finished from');
    const verified = await cli(sandbox, ['verify']);
    assert.equal(verified.code, 0, verified.stdout);
    const write = await cli(sandbox, ['save', 'A new note after the erasure finished', '--namespace', NS]);
    assert.equal(write.code, 0, `the namespace takes writes again: ${write.stderr}`);
  });

  it('a text erased from one namespace that another namespace keeps does not fail the byte check', async () => {
    const shared = 'The staging database password rotates on the first Monday of each month';
    for (const ns of ['shared/erase', 'shared/keep']) {
      const saved = await cli(sandbox, ['save', shared, '--namespace', ns]);
      assert.equal(saved.code, 0, saved.stderr);
    }
    const only = await cli(sandbox, ['save', 'Only the erased namespace knows the vendor contract ends in March', '--namespace', 'shared/erase']);
    assert.equal(only.code, 0, only.stderr);
    const erased = await cli(sandbox, ['erase', '--namespace', 'shared/erase', '--key', key(), '--out', join(sandbox.dir, 'shared.json')]);
    assert.equal(erased.code, 0, `${erased.stdout}${erased.stderr}`);
    const valid = await cli(sandbox, ['verify-certificate', join(sandbox.dir, 'shared.json'), '--key', pub()]);
    assert.equal(valid.code, 0, valid.stdout);
    const cert = (JSON.parse(readFileSync(join(sandbox.dir, 'shared.json'), 'utf8')) as { certificate: { checks: { name: string; detail: string }[] } }).certificate;
    assert.match(cert.checks.find((c) => c.name === 'file-bytes')?.detail ?? '', /^0 of 1 erased strings .*1 erased texts also held by memories that remain/u);
    const bytes = fileBytes(sandbox.db);
    assert.ok(!bytes.includes('vendor contract ends in March'), 'the text only the erased namespace held is gone');
    const kept = await cli(sandbox, ['search', 'staging database password', '--namespace', 'shared/keep', '--json']);
    assert.match(kept.stdout, /first Monday/u, 'the other namespace keeps its copy');
  });
});
