/**
 * The ingest filter's settings and their defaults, apart from the filter (ingest-filter.ts): the engine's context
 * holds them, and a process that only searches never loads the filter, its model or its rules.
 */

export interface IngestFilterConfig {
  /** Off: every write is stored without screening (redaction still runs). */
  enabled: boolean;
  /**
   * Classifier probability at or above which a text is held. Unset: the threshold calibrated with the
   * committed model (`filter-model.json`), chosen on the calibration split.
   */
  threshold?: number;
  /** Cosine similarity at or above which a text is held against an anchor learned from a confirmed attack. */
  learnedThreshold: number;
  /** Score the de-obfuscated text too. */
  deobfuscate: boolean;
  /** Score windows of long texts too. */
  windows: boolean;
}

/** Defaults: see bench/results/security.json for the calibration and the held-out figures. */
export const DEFAULT_FILTER_CONFIG: IngestFilterConfig = {
  enabled: true,
  learnedThreshold: 0.8,
  deobfuscate: true,
  windows: true,
};
