/**
 * The detached half of the PreCompact hook: `node capture-worker.js <job file>`. Saves the statements the
 * hook extracted (embedding them, which takes seconds), records the capture position, logs to the hooks
 * log. Started by pre-compact.ts, never by a user; it outlives the hook so compaction does not wait.
 */
import { readFileSync, rmSync } from 'node:fs';
import { createHookLog } from './hook-io.js';
import { runCaptureJob, type CaptureJob } from './pre-compact.js';

const spool = process.argv[2];
if (spool) {
  let job: CaptureJob | null = null;
  try {
    job = JSON.parse(readFileSync(spool, 'utf8')) as CaptureJob;
  } catch {
    // nothing to do without a readable job; the next capture rereads the transcript
  }
  rmSync(spool, { force: true });
  if (job && job.version === 1 && Array.isArray(job.inputs)) {
    const { log } = createHookLog(job.dataDir, process.env);
    try {
      await runCaptureJob(job, process.env, log);
    } catch (err) {
      log.error('pre-compact: the capture worker failed', { error: (err as Error).message });
    }
  }
}
