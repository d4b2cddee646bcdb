import { z } from 'zod';
import { validateNamespace } from '../core/validate.js';
import { CairnError } from '../interfaces/errors.js';
import { checked, says } from './zod-checks.js';

/**
 * The config file's shape, checked with zod. open-engine.ts loads this module only when there is a file (a cold
 * hook without one never loads zod); the Stop gate reads the file's `hooks` settings alone (settings.ts).
 */

const ConfigFileSchema = z
  .object({
    db: z.string().min(1).optional(),
    namespace: checked(z.string(says(validateNamespace)), validateNamespace).optional(),
    embedder: z
      .object({
        provider: z.enum(['use', 'openai', 'none']),
        baseUrl: z.string().url().optional(),
        model: z.string().min(1).optional(),
        dimensions: z.number().int().positive().optional(),
        apiKeyEnv: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
    reranker: z.enum(['none', 'overlap']).optional(),
    weights: z.object({ vector: z.number().min(0), lexical: z.number().min(0), recency: z.number().min(0) }).partial().strict().optional(),
    logLevel: z.enum(['debug', 'info', 'warn', 'error', 'silent']).optional(),
    /** The ingest filter and secret redaction (see resolveSecurity). */
    security: z
      .object({
        filter: z
          .object({
            enabled: z.boolean(),
            threshold: z.number().gt(-1).max(1),
            learnedThreshold: z.number().gt(-1).max(1),
            deobfuscate: z.boolean(),
            windows: z.boolean(),
          })
          .partial()
          .strict()
          .optional(),
        redaction: z
          .object({
            mode: z.enum(['off', 'redact', 'reject']),
            /** Exact strings, or `/regex/flags`, that are never redacted. */
            allow: z.array(z.string().min(1)),
            /** Kinds that are off by default to switch on (`email`, `phone`). */
            enable: z.array(z.string().min(1)),
            disable: z.array(z.string().min(1)),
          })
          .partial()
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    /** Hook settings, validated by parseHookSettings (settings.ts), which the Stop gate also uses alone. */
    hooks: z.unknown().optional(),
    /** PostgreSQL connection settings (when `db` is a postgres:// URL); CAIRN_PG_* override them. */
    postgres: z
      .object({
        poolSize: z.number().int().min(1).max(1000),
        statementTimeoutMs: z.number().int().min(0).max(3_600_000),
        createExtension: z.boolean(),
        copyMaxMemories: z.number().int().min(0).max(100_000_000),
        preparedStatements: z.boolean(),
      })
      .partial()
      .strict()
      .optional(),
  })
  .strict();

export type CairnConfigFile = z.infer<typeof ConfigFileSchema>;

/** The file's settings, or INVALID_INPUT naming the file, the setting and what is wrong with it. */
export function parseConfigFile(path: string, raw: unknown): CairnConfigFile {
  const parsed = ConfigFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CairnError('INVALID_INPUT', `config file ${path}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`);
  }
  return parsed.data;
}
