// Why a runtime install failed, in words a person can act on, read from npm's output. Plain JavaScript with
// no dependencies, like the launcher that uses it (plugin/launch.mjs): it runs before anything is installed.

/** The last lines of npm's own error report, for a failure none of the known causes explains. */
function npmErrorLine(output) {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /^npm (ERR!|error) /u.test(l) && !/complete log|A complete log|log of this run|^npm (ERR!|error)\s*$/u.test(l));
  return lines.length ? lines.slice(0, 2).map((l) => l.replace(/^npm (ERR!|error) /u, '')).join('; ') : '';
}

/**
 * The cause of a failed `npm ci` of cairn's runtime, as one clause ("the SQLite driver could not be built or
 * downloaded …"). `spawnError` is the error spawning npm gave (if it did not start), `exitCode` its exit code,
 * `output` what it printed, `node` / `platform` / `arch` the runtime it installed for.
 */
export function installFailureCause({ spawnError, exitCode, output = '', node = process.version, platform = process.platform, arch = process.arch }) {
  if (spawnError?.code === 'ENOENT') return "npm was not found on the PATH Claude Code runs with (cairn's runtime is installed with npm, which comes with Node.js)";
  if (spawnError) return `npm could not be started (${spawnError.message})`;
  if (/\bENOSPC\b/u.test(output)) return 'the disk is full';
  if (/better-sqlite3/u.test(output) && /gyp (ERR!|info)|prebuild-install|node-gyp|install script|command failed/iu.test(output)) {
    const why = /find any Python|python3?: not found|Python is not set/iu.test(output)
      ? ': no prebuilt driver could be downloaded, and building it needs Python 3, which was not found'
      : /(make|g\+\+|c\+\+|cc): (not found|command not found)|not found: (make|g\+\+)|No (C|C\+\+) compiler/iu.test(output)
        ? ': no prebuilt driver could be downloaded, and building it needs make and a C++ compiler, which were not found'
        : `: no prebuilt driver for Node.js ${node} on ${platform}-${arch} could be downloaded, and building it (Python 3, make and a C++ compiler) failed`;
    return `the SQLite driver (better-sqlite3) could not be built or downloaded${why}`;
  }
  if (/\b(ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH)\b|network request to .* failed|SELF_SIGNED_CERT|UNABLE_TO_(GET|VERIFY)_/u.test(output)) {
    return 'npm could not reach the package registry (offline, or a proxy or certificate is in the way)';
  }
  if (/\b(EACCES|EPERM)\b/u.test(output)) {
    const path = /\bpath (\S+)/u.exec(output)?.[1];
    return `npm was not allowed to write${path ? ` ${path}` : ' a file it needs'} (permission denied)`;
  }
  if (/\bEBADENGINE\b|Unsupported engine/u.test(output)) return `Node.js ${node} is older than cairn needs (20.10 or newer)`;
  if (/error TS\d+/u.test(output)) return 'compiling cairn (tsc) failed';
  const detail = npmErrorLine(output);
  return `npm ci failed (exit ${exitCode ?? 'unknown'})${detail ? `: ${detail}` : ''}`;
}
