#!/usr/bin/env node
// Entry point of the `cairn` command; the compiled CLI lives in dist/ (npm run build).
import { main } from '../dist/src/surfaces/cli/main.js';

const code = await main(process.argv.slice(2));
process.exitCode = process.exitCode || code;
