import { open } from 'node:fs/promises';

/**
 * Reads a JSON-lines file from a byte offset in fixed-size chunks, in bounded memory whatever the file's
 * size: a line longer than `maxLineBytes` (a huge tool result, an inlined image) is skipped without being
 * held, and only lines that pass `wanted` (a test on the raw bytes) are decoded.
 */

export interface ReadLinesOptions {
  /** Byte offset to start at (the end of a line read earlier). */
  from: number;
  /** Lines longer than this are skipped. Default 8 MiB. */
  maxLineBytes?: number;
  /** Cheap test on a line's raw bytes; lines it rejects are never decoded. Default: every line. */
  wanted?: (line: Buffer) => boolean;
  /** Called with each wanted, newline-terminated line, in file order. */
  onLine: (line: string) => void;
  chunkBytes?: number;
}

export interface ReadLinesResult {
  /** Offset just past the last newline read: where the next read should start. */
  endOffset: number;
  /** The bytes after the last newline (a line still being written, or a file without a final newline), or null. */
  tail: string | null;
  /** Size of the file when reading ended. */
  size: number;
  linesRead: number;
  linesSkippedTooLong: number;
}

export async function readLines(path: string, options: ReadLinesOptions): Promise<ReadLinesResult> {
  const maxLine = options.maxLineBytes ?? 8 * 1024 * 1024;
  const wanted = options.wanted ?? (() => true);
  const chunk = Buffer.allocUnsafe(options.chunkBytes ?? 1024 * 1024);
  const handle = await open(path, 'r');
  let position = options.from;
  let endOffset = options.from;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let skipping = false;
  let linesRead = 0;
  let linesSkippedTooLong = 0;
  try {
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(10, start);
        if (nl === -1 || nl >= bytesRead) break;
        if (skipping) {
          skipping = false;
          linesSkippedTooLong++;
        } else {
          const piece = chunk.subarray(start, nl);
          const line = pendingBytes ? Buffer.concat([...pending, piece], pendingBytes + piece.length) : piece;
          if (line.length > maxLine) linesSkippedTooLong++;
          else {
            linesRead++;
            if (line.length > 0 && wanted(line)) options.onLine(line.toString('utf8'));
          }
        }
        pending = [];
        pendingBytes = 0;
        start = nl + 1;
        endOffset = position - bytesRead + start;
      }
      if (start < bytesRead && !skipping) {
        const rest = Buffer.from(chunk.subarray(start, bytesRead)); // copied: the chunk buffer is reused
        if (pendingBytes + rest.length > maxLine) {
          skipping = true;
          pending = [];
          pendingBytes = 0;
        } else {
          pending.push(rest);
          pendingBytes += rest.length;
        }
      }
    }
  } finally {
    await handle.close();
  }
  const tail = !skipping && pendingBytes > 0 ? Buffer.concat(pending, pendingBytes).toString('utf8') : null;
  return { endOffset, tail, size: position, linesRead, linesSkippedTooLong };
}
