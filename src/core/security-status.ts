import type { IngestFilterConfig } from './ingest-filter-config.js';
import type { RedactionConfig } from './redact.js';
import type { EngineContext } from './engine-context.js';

/** How the engine's security layer is set, for `cairn doctor`. */
export interface SecurityStatus {
  filter: IngestFilterConfig & { active: boolean; reason: string | null };
  redaction: { mode: RedactionConfig['mode']; allowList: number; enabled: string[]; disabled: string[] };
}

/** How the ingest filter and redaction are set, and whether the filter can run (it needs an embedder). */
export function securityStatus(ctx: EngineContext): SecurityStatus {
  const active = ctx.filterConfig.enabled && ctx.embedder !== null;
  return {
    filter: {
      ...ctx.filterConfig,
      active,
      reason: active ? null : ctx.filterConfig.enabled ? 'no embedder is configured: writes are not screened' : 'switched off in the configuration',
    },
    redaction: {
      mode: ctx.redaction.mode,
      allowList: ctx.redaction.allowExact.length + ctx.redaction.allowPatterns.length,
      enabled: [...ctx.redaction.enable],
      disabled: [...ctx.redaction.disable],
    },
  };
}
