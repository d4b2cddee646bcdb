/**
 * The cause a failed runtime install is reported with (plugin/install-cause.mjs), read from npm's output:
 * the shapes npm 10 and better-sqlite3's install script print for each failure.
 */
import * as assert from 'node:assert/strict';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

// dist/test/plugin-install-cause.test.js → repository root
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
type Cause = (failure: { spawnError?: NodeJS.ErrnoException; exitCode?: number | null; output?: string; node?: string; platform?: string; arch?: string }) => string;
const { installFailureCause } = (await import(pathToFileURL(join(ROOT, 'plugin', 'install-cause.mjs')).href)) as { installFailureCause: Cause };

const SQLITE_NO_PYTHON = `npm error code 1
npm error path /home/u/.claude/plugins/data/cairn-cairn-memory/runtime.staging/node_modules/better-sqlite3
npm error command failed
npm error command sh -c prebuild-install || node-gyp rebuild --release
npm error prebuild-install warn install request to https://github.com/WiseLibs/better-sqlite3/releases/download/v12.4.1/better-sqlite3-v12.4.1-node-v115-linux-x64.tar.gz failed, reason: getaddrinfo ENOTFOUND github.com
npm error gyp info it worked if it ends with ok
npm error gyp ERR! find Python
npm error gyp ERR! find Python You need to install the latest version of Python.
npm error gyp ERR! configure error
npm error gyp ERR! stack Error: Could not find any Python installation to use
npm error A complete log of this run can be found in: /home/u/.npm/_logs/2026-12-01T09_00_00_000Z-debug-0.log
`;

const SQLITE_NO_COMPILER = SQLITE_NO_PYTHON.replace(/gyp ERR! find Python[^\n]*\n/gu, '').replace('gyp ERR! stack Error: Could not find any Python installation to use', 'gyp ERR! build error\nnpm error make: g++: not found');

describe('installFailureCause', () => {
  const at = { node: 'v20.20.2', platform: 'linux', arch: 'x64' };

  it('names the SQLite driver when better-sqlite3 could not be downloaded or built, and what building it lacked', () => {
    assert.equal(
      installFailureCause({ exitCode: 1, output: SQLITE_NO_PYTHON, ...at }),
      'the SQLite driver (better-sqlite3) could not be built or downloaded: no prebuilt driver could be downloaded, and building it needs Python 3, which was not found',
    );
    assert.match(installFailureCause({ exitCode: 1, output: SQLITE_NO_COMPILER, ...at }), /^the SQLite driver \(better-sqlite3\) could not be built or downloaded: .*needs make and a C\+\+ compiler/u);
    const other = SQLITE_NO_PYTHON.replace(/[^\n]*Python[^\n]*\n/gu, '');
    assert.equal(installFailureCause({ exitCode: 1, output: other, ...at }), 'the SQLite driver (better-sqlite3) could not be built or downloaded: no prebuilt driver for Node.js v20.20.2 on linux-x64 could be downloaded, and building it (Python 3, make and a C++ compiler) failed');
  });

  it('names a missing npm, an unreachable registry, a full disk and a permission problem', () => {
    const enoent = Object.assign(new Error('spawnSync npm ENOENT'), { code: 'ENOENT' });
    assert.match(installFailureCause({ spawnError: enoent }), /^npm was not found on the PATH/u);
    assert.equal(
      installFailureCause({ exitCode: 1, output: 'npm error code ENOTFOUND\nnpm error syscall getaddrinfo\nnpm error network request to https://registry.npmjs.org/zod failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org\n' }),
      'npm could not reach the package registry (offline, or a proxy or certificate is in the way)',
    );
    assert.equal(installFailureCause({ exitCode: 228, output: 'npm error code ENOSPC\nnpm error syscall write\n' }), 'the disk is full');
    assert.equal(installFailureCause({ exitCode: 1, output: 'npm error code EACCES\nnpm error syscall mkdir\nnpm error path /root/.npm/_cacache\n' }), 'npm was not allowed to write /root/.npm/_cacache (permission denied)');
  });

  it('falls back to npm’s own first error lines, never to nothing', () => {
    assert.equal(installFailureCause({ exitCode: 1, output: 'npm error code EUSAGE\nnpm error `npm ci` can only install with an existing package-lock.json\nnpm error A complete log of this run can be found in: /x.log\n' }), 'npm ci failed (exit 1): code EUSAGE; `npm ci` can only install with an existing package-lock.json');
    assert.equal(installFailureCause({ exitCode: 1, output: '' }), 'npm ci failed (exit 1)');
  });
});
