import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import { CairnError } from '../../interfaces/errors.js';

/**
 * The brain page: static files from the package's `web/` folder (plain HTML, CSS and JavaScript, no build
 * step and nothing fetched from elsewhere), read once at start. The page talks to `/api` only.
 */

const WEB_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'web');

const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
  '/curate.js': { file: 'curate.js', type: 'text/javascript; charset=utf-8' },
  '/feed.js': { file: 'feed.js', type: 'text/javascript; charset=utf-8' },
  '/code.js': { file: 'code.js', type: 'text/javascript; charset=utf-8' },
  '/review.js': { file: 'review.js', type: 'text/javascript; charset=utf-8' },
};

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
};

export function webRoutes(dir = WEB_DIR): Hono {
  const app = new Hono();
  const cache = new Map<string, string>();
  const load = (file: string): string | null => {
    if (!cache.has(file)) {
      try {
        cache.set(file, readFileSync(join(dir, file), 'utf8'));
      } catch {
        return null;
      }
    }
    return cache.get(file) ?? null;
  };
  for (const [path, { file, type }] of Object.entries(FILES)) {
    app.get(path, (c) => {
      const content = load(file);
      if (content === null) throw new CairnError('INTERNAL', `the page's ${file} is missing from this installation`);
      return c.body(content, 200, { 'content-type': type, ...SECURITY_HEADERS });
    });
  }
  return app;
}
