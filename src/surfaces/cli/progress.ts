/**
 * A progress bar on stderr. On a terminal it redraws one line, a bar with the total as soon as it is known;
 * elsewhere (pipes, CI) it prints a plain line (done of total and the share) at most every few seconds, so
 * logs stay readable. stdout is never touched.
 */
export function createProgress(
  label: string,
  stream: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr,
  options: { plainEveryMs?: number } = {},
): { update(done: number, total: number | null): void; finish(): void } {
  const tty = Boolean(stream.isTTY);
  const plainEveryMs = options.plainEveryMs ?? 5000;
  let last = 0;
  let lastDone = 0;
  let lastTotal: number | null = null;
  let shown = false;
  const bar = (done: number, total: number | null): string => {
    if (total && total > 0) {
      const width = 30;
      const filled = Math.min(width, Math.round((done / total) * width));
      return `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}`;
    }
    return `${label} ${done}`;
  };
  const plain = (done: number, total: number | null): string =>
    total && total > 0 ? `${label} ${done} of ${total} (${Math.floor((Math.min(done, total) / total) * 100)}%)` : `${label} ${done}`;
  return {
    update(done, total) {
      lastDone = done;
      lastTotal = total;
      const now = Date.now();
      if (tty) {
        if (now - last < 80 && done !== total && shown) return;
        stream.write(`\r${bar(done, total)}`);
        shown = true;
      } else if (done === 0) {
        return; // in a log the clock starts with the first work done, so a short run prints nothing
      } else if (now - last > plainEveryMs) {
        if (last !== 0) stream.write(`${plain(done, total)}\n`);
      } else return;
      last = now;
    },
    finish() {
      if (tty && shown) stream.write(`\r${bar(lastDone, lastTotal ?? lastDone)}\n`);
    },
  };
}
