/**
 * A progress bar on stderr. On a terminal it redraws one line; elsewhere (pipes, CI) it prints a line at
 * most every few seconds, so logs stay readable. stdout is never touched.
 */
export function createProgress(label: string, stream: NodeJS.WriteStream = process.stderr): { update(done: number, total: number | null): void; finish(): void } {
  const tty = Boolean(stream.isTTY);
  let last = 0;
  let lastDone = 0;
  let shown = false;
  const render = (done: number, total: number | null): string => {
    if (total && total > 0) {
      const width = 30;
      const filled = Math.min(width, Math.round((done / total) * width));
      return `${label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}`;
    }
    return `${label} ${done}`;
  };
  return {
    update(done, total) {
      lastDone = done;
      const now = Date.now();
      if (tty) {
        if (now - last < 80 && done !== total) return;
        stream.write(`\r${render(done, total)}`);
        shown = true;
      } else if (now - last > 5000) {
        if (last !== 0) stream.write(`${render(done, total)}\n`);
      } else return;
      last = now;
    },
    finish() {
      if (tty && shown) stream.write(`\r${render(lastDone, lastDone)}\n`);
    },
  };
}
