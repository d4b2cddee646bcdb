#!/usr/bin/env node
// Entry point of the `cairn` command; the compiled CLI lives in dist/ (npm run build).
import { existsSync } from 'node:fs';

const hookEntry = new URL('../dist/src/surfaces/hooks/hook-command.js', import.meta.url);
const args = process.argv.slice(2);

if (args.length === 2 && args[0] === 'hook' && !args[1].startsWith('-') && existsSync(hookEntry)) {
  // `cairn hook <event>` (the Stop gate runs at every stop) skips the CLI's imports: only the hook's code loads.
  const { runHookInProcess } = await import(hookEntry.href);
  await runHookInProcess(args[1]);
} else if (existsSync(new URL('../dist/src/surfaces/cli/main.js', import.meta.url))) {
  const { main } = await import('../dist/src/surfaces/cli/main.js');
  const code = await main(process.argv.slice(2));
  process.exitCode = process.exitCode || code;
} else {
  // Installed as a Claude Code plugin, without install scripts: the launcher sets up a built runtime.
  await import('../plugin/launch.mjs');
}
