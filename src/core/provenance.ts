import type { Provenance } from '../interfaces/memory.js';

/**
 * Who wrote a memory, as recall shows it, and whether that writer is trusted to give the agent instructions.
 * Only the user is: a statement captured by a hook from the user's own prompt or a note typed at the CLI.
 * Everything else — the agent through a tool, an import, the brain page, a team token over HTTP, a
 * conversation turn — is recorded and recalled as data.
 */
export interface ProvenanceView {
  /** Plain words: `user statement (hook)`, `agent tool (mcp, agent claude)`, `import`, `page`, `team token`… */
  label: string;
  trusted: boolean;
}

const LABELS: Record<string, { label: string; trusted: boolean }> = {
  'pre-compact-hook': { label: 'user statement (hook)', trusted: true },
  'prompt-hook': { label: 'user statement (hook)', trusted: true },
  cli: { label: 'user (cli)', trusted: true },
  mcp: { label: 'agent tool (mcp)', trusted: false },
  import: { label: 'import', trusted: false },
  turn: { label: 'conversation turn', trusted: false },
  page: { label: 'page', trusted: false },
  http: { label: 'team token (http)', trusted: false },
};

export function provenanceOf(metadata: Provenance): ProvenanceView {
  const source = metadata.source ?? 'unknown';
  const known = LABELS[source] ?? { label: source, trusted: false };
  const agent = metadata.agent ? `, agent ${metadata.agent}` : '';
  const label = agent && known.label.endsWith(')') ? `${known.label.slice(0, -1)}${agent})` : `${known.label}${agent}`;
  return { label, trusted: known.trusted };
}
