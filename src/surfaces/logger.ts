import { appendFileSync } from 'node:fs';
import type { Logger } from '../interfaces/embedder.js';

const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LEVELS)[number];

/** A logger writing one line per entry to stderr or to a file; never to stdout, which protocols own. */
export function createLogger(options: { level?: LogLevel; file?: string | undefined } = {}): Logger {
  const min = LEVELS.indexOf(options.level ?? 'warn');
  const write = (level: LogLevel, message: string, fields?: Record<string, unknown>) => {
    if (LEVELS.indexOf(level) < min) return;
    const line = `${new Date().toISOString()} ${level} ${message}${fields ? ' ' + JSON.stringify(fields) : ''}\n`;
    try {
      if (options.file) appendFileSync(options.file, line);
      else process.stderr.write(line);
    } catch {
      // logging must never take the caller down
    }
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}

export function parseLogLevel(value: string | undefined): LogLevel {
  return (LEVELS as readonly string[]).includes(value ?? '') ? (value as LogLevel) : 'warn';
}
