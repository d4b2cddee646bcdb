/**
 * Helpers for tests of `cairn serve`: start the real bin on a free loopback port, and raw HTTP requests with
 * full control of the Host and Origin headers.
 */
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BIN, type Sandbox } from './mcp-scenario.js';

export interface Served {
  child: ChildProcess;
  url: URL;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Starts `cairn serve --port 0` and waits for the one line that gives its address. */
export async function serve(sandbox: Sandbox, extra: string[] = []): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--db', sandbox.db, ...extra], { cwd: sandbox.cwd, env: sandbox.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<URL>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`cairn serve did not start: ${stderr}`)), 30_000);
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const m = /serving MCP at (http:\/\/\S+\/mcp) /u.exec(stderr);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(new URL(m[1]));
      }
    });
    void exited.then((code) => reject(new Error(`cairn serve exited ${code}: ${stderr}`)));
  });
  assert.equal(stdout, '', 'serve writes nothing to stdout');
  return { child, url, stderr: () => stderr, exited };
}

export async function connect(url: URL, name: string, token?: string): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : undefined));
  return client;
}

/** A raw request with full control of the Host and Origin headers (fetch does not allow setting Host). */
export function raw(url: URL, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; body: string; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: options.path ?? url.pathname, method: options.method ?? 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...options.headers } },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(options.body ?? '');
  });
}

