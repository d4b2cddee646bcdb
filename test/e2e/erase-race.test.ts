/**
 * Erasure racing writers in other processes: `cairn serve --auth` with clients posting to a namespace while
 * `cairn erase --namespace` runs from the CLI. The erasure keeps every other writer out of its scope for its
 * whole run (they get 409 CONFLICT meanwhile), its own checks pass, `cairn verify` proves the log, and
 * `cairn recover` brings back nothing that was erased.
 */
import * as assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cli, cliJson, createSandbox, type Sandbox } from './mcp-scenario.js';
import { raw, serve, type Served } from './served.js';

const NS = 'race/x';
const SEEDED = 200;
const ROUNDS = 3;

describe('cairn erase against writers in another process', { concurrency: false }, () => {
  let sandbox: Sandbox;
  let served: Served;
  let base: URL;
  let token: string;

  before(async () => {
    sandbox = createSandbox('erase-race');
    // Without vectors a write is quick, so many land in the erasure's window: the race is about the lock,
    // not the model (with the model it takes thousands of memories to show).
    sandbox.env['CAIRN_EMBEDDER'] = 'none';
    const keys = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
    writeFileSync(join(sandbox.dir, 'erase.pem'), keys.privateKey);
    writeFileSync(join(sandbox.dir, 'erase.pub.pem'), keys.publicKey);
    const lines = Array.from({ length: SEEDED }, (_, i) => JSON.stringify({ text: `Seeded fact number ${i} about the race namespace and its module ${i * 7}`, namespace: NS }));
    lines.push(JSON.stringify({ text: 'A note kept in another namespace while race/x is erased', namespace: 'race/keep' }));
    writeFileSync(join(sandbox.dir, 'seed.jsonl'), `${lines.join('\n')}\n`);
    const imported = await cli(sandbox, ['import', join(sandbox.dir, 'seed.jsonl')]);
    assert.equal(imported.code, 0, imported.stderr);
    token = (await cliJson<{ token: string }>(sandbox, ['token', 'create', '--namespace', '*', '--scope', 'admin'])).token;
    // No rate limit: three writers without a model post faster than the default 600 a minute, and a 429 is
    // not what this test is about.
    served = await serve(sandbox, ['--auth', '--quiet', '--rate-limit', '0']);
    base = new URL('/', served.url);
  });

  after(async () => {
    served.child.kill('SIGTERM');
    await served.exited;
    sandbox.remove();
  });

  it('keeps writers out of the namespace for its whole run; checks, verify and recover agree', async () => {
    let stop = false;
    const statuses = new Map<number, number>();
    const unexpected: string[] = [];
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const r = await raw(base, {
          method: 'POST',
          path: '/api/memories',
          headers: { authorization: `Bearer ${token}`, connection: 'close' },
          body: JSON.stringify({ namespace: NS, text: `Writer ${w} posted note ${i} while an erasure may be running` }),
        });
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        if (r.status !== 201 && r.status !== 409) unexpected.push(`${r.status} ${r.body}`);
      }
    };
    // The server's first write loads the model: warm it before the race starts.
    const warm = await raw(base, { method: 'POST', path: '/api/memories', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify({ namespace: 'race/keep', text: 'warming the embedding model of the server' }) });
    assert.equal(warm.status, 201, warm.body);
    const writers = [writer(1), writer(2), writer(3)];
    await new Promise((r) => setTimeout(r, 200));
    // A few rounds while the writers keep posting: each erasure must leave a consistent store behind.
    const runs = [];
    for (let round = 0; round < ROUNDS; round++) {
      runs.push(await cli(sandbox, ['erase', '--namespace', NS, '--key', join(sandbox.dir, 'erase.pem'), '--out', join(sandbox.dir, round === 0 ? 'cert.json' : `cert-${round}.json`)]));
    }
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await Promise.all(writers);
    assert.deepEqual(unexpected, [], 'a write is stored or refused (409) while erasing, never failed');
    runs.forEach((erased, round) => assert.equal(erased.code, 0, `erase round ${round}: ${erased.stdout}${erased.stderr} ${JSON.stringify([...statuses])}`));
    assert.ok((statuses.get(201) ?? 0) > 0, `writers were running: ${JSON.stringify([...statuses])}`);

    const cert = JSON.parse(readFileSync(join(sandbox.dir, 'cert.json'), 'utf8')) as { certificate: { counts: Record<string, number>; checks: { passed: boolean }[] } };
    assert.ok((cert.certificate.counts['memories'] ?? 0) >= SEEDED, 'every seeded memory was erased');
    assert.ok(cert.certificate.checks.every((c) => c.passed));
    const valid = await cli(sandbox, ['verify-certificate', join(sandbox.dir, 'cert.json'), '--key', join(sandbox.dir, 'erase.pub.pem')]);
    assert.equal(valid.code, 0, valid.stdout);

    served.child.kill('SIGTERM');
    await served.exited;
    const verified = await cli(sandbox, ['verify']);
    assert.equal(verified.code, 0, `verify after the race: ${verified.stdout}${verified.stderr}`);
    const list = async () => (await cliJson<{ memories: { id: string }[] }>(sandbox, ['list', '--namespace', NS, '--limit', '10000', '--all'])).memories.map((m) => m.id).sort();
    const before = await list();
    assert.ok(!before.length || before.length < (statuses.get(201) ?? 0) + 1, 'what is left are writes after the erasure');
    const recovered = await cli(sandbox, ['recover']);
    assert.equal(recovered.code, 0, recovered.stderr);
    assert.deepEqual(await list(), before, 'recover brings back nothing that was erased');
    const seededLeft = (await cliJson<{ memories: { text: string }[] }>(sandbox, ['list', '--namespace', NS, '--limit', '10000', '--all'])).memories.filter((m) => m.text.startsWith('Seeded fact'));
    assert.equal(seededLeft.length, 0);
    served = await serve(sandbox, ['--auth', '--quiet', '--rate-limit', '0']);
  });
});
