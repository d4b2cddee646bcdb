/**
 * A coarse-list build (coarse-lists.ts CoarseBuild) as bytes, for a store that keeps it for the next process (the
 * embedded store's lists file, PostgreSQL's `recall_lists` table): its centroids, then each snapshot row's key,
 * then each row's list, with the counts and a checksum the reader checks before it takes any of it.
 */
import { createHash } from 'node:crypto';
import type { CoarseBuild } from './coarse-lists.js';

/** What a reader needs beside the bytes: their shape and checksum. */
export interface CoarseBuildShape {
  lists: number;
  rows: number;
  farBelow: number;
  sha256: string;
}

export function encodeCoarseBuild(build: CoarseBuild): { body: Buffer; shape: CoarseBuildShape } {
  const body = Buffer.concat([bytesOf(build.centroids), bytesOf(build.keys), bytesOf(build.assignment)]);
  return {
    body,
    shape: { lists: build.centroids.length / build.dimensions, rows: build.keys.length, farBelow: build.farBelow, sha256: createHash('sha256').update(body).digest('hex') },
  };
}

/** The build the bytes hold, or why they cannot be taken (`what` names them in the reason). */
export function decodeCoarseBuild(body: Buffer, shape: CoarseBuildShape, dimensions: number, what: string): { build: CoarseBuild } | { problem: string } {
  if (!Number.isInteger(shape.lists) || !Number.isInteger(shape.rows) || shape.lists < 1 || shape.rows < 0 || typeof shape.farBelow !== 'number') {
    return { problem: `${what} have a damaged header` };
  }
  if (body.length !== shape.lists * dimensions * 4 + shape.rows * 10) return { problem: `${what} are truncated or have trailing bytes` };
  if (createHash('sha256').update(body).digest('hex') !== shape.sha256) return { problem: `${what} are damaged (checksum)` };
  // Copied out (the bytes are not aligned for typed arrays).
  const centroids = new Float32Array(shape.lists * dimensions);
  const keys = new Float64Array(shape.rows);
  const assignment = new Uint16Array(shape.rows);
  let at = 0;
  for (const array of [centroids, keys, assignment]) {
    Buffer.from(array.buffer).set(body.subarray(at, at + array.byteLength));
    at += array.byteLength;
  }
  if (assignment.some((list) => list > shape.lists)) return { problem: `${what} name a list they do not have` };
  return { build: { dimensions, centroids, keys, assignment, farBelow: shape.farBelow } };
}

function bytesOf(array: Float32Array | Float64Array | Uint16Array): Buffer {
  return Buffer.from(array.buffer, array.byteOffset, array.byteLength);
}
