import { lifecycleStates, type Memory } from '../../interfaces/memory.js';
import { memoryJson } from '../mcp/mcp-server.js';

/**
 * Everything a reviewer needs about a memory: the MCP shape plus its lifecycle, with `states` and `active`
 * from the one definition (interfaces/memory.ts) at the time of the answer, so the page decides nothing.
 */
export function memoryView(m: Memory): Record<string, unknown> {
  const states = lifecycleStates(m, new Date().toISOString());
  return {
    ...memoryJson(m),
    active: states.length === 0,
    states,
    updatedAt: m.updatedAt,
    expiresAt: m.expiresAt,
    supersededBy: m.supersededBy,
    forgottenAt: m.forgottenAt,
    forgetReason: m.forgetReason,
  };
}
