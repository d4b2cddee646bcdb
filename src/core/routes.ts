// Routes (where things live), following renamed files, and task notes.
import { CairnError } from '../interfaces/errors.js';
import type { Memory, Provenance, RouteInfo, SaveResult } from '../interfaces/memory.js';
import { emit } from './events.js';
import type { StaleMark } from '../interfaces/code.js';
import { followMoves } from './staleness.js';
import { validateId, validateRoute, validateText } from './validate.js';
import type { EngineContext } from './engine-context.js';
import { supersede } from './lifecycle.js';
import { memoryIn } from './reads.js';
import { save, validateTaskId } from './write-path.js';

/** A route given to saveRoute / updateRoute; description and paths default to empty. */
export interface RouteInput {
  title: string;
  description?: string;
  paths?: string[];
}

/** The text of a route memory: title, description and paths, so a change to any of them is a new text. */
export function routeText(route: RouteInfo): string {
  const head = [route.title, route.description].filter(Boolean).join(': ');
  return route.paths.length ? `${head} (paths: ${route.paths.join(', ')})` : head;
}

/** A task note shorter than this many characters (after trimming) is not stored. */
export const TASK_NOTE_MIN_CHARS = 40;
export const TASK_NOTE_IMPORTANCE = 4;

export interface TaskNoteInput {
  taskId: string;
  /** What was done, learned and why. */
  context: string;
  namespace?: string | undefined;
  metadata?: Provenance | undefined;
}

export type TaskNoteResult = ({ stored: true; chars: number } & SaveResult) | { stored: false; chars: number; reason: string };

/**
 * Saves a route; its text is always routeText(route), so the same route from the CLI, MCP or HTTP is one
 * memory (the dedupe key comes from that text). `supersedes` replaces an older memory.
 */
export async function saveRoute(ctx: EngineContext,
  route: RouteInput,
  options: { namespace?: string | undefined; metadata?: Provenance | undefined; supersedes?: string | undefined } = {},
): Promise<SaveResult> {
  const r = validateRoute(route);
  return save(ctx, { text: routeText(r), kind: 'route', route: r, namespace: options.namespace, metadata: options.metadata, supersedes: options.supersedes });
}

/**
 * Replaces a route with a new version that supersedes it (the old one stays in history, out of recall).
 * Fields missing from `patch` keep their value. NOT_FOUND when there is no such memory, INVALID_INPUT
 * when it is not a route, CONFLICT when nothing would change or it was already replaced.
 */
export async function updateRoute(ctx: EngineContext, id: string, patch: Partial<RouteInput>, options: { namespace?: string | undefined; metadata?: Provenance | undefined } = {}): Promise<SaveResult> {
  const mid = validateId(id, 'id');
  const old = await memoryIn(ctx, mid, { namespace: options.namespace });
  if (!old) throw new CairnError('NOT_FOUND', `no memory ${mid} in namespace ${ctx.ns(options.namespace)}`, { field: 'id' });
  if (old.kind !== 'route' || !old.route) throw new CairnError('INVALID_INPUT', `id: memory ${mid} is a ${old.kind}, not a route`, { field: 'id' });
  const next = validateRoute({
    title: patch.title ?? old.route.title,
    description: patch.description ?? old.route.description,
    paths: patch.paths ?? old.route.paths,
  });
  if (routeText(next) === routeText(old.route)) {
    throw new CairnError('CONFLICT', `route ${mid} already has this title, description and paths`, { field: 'id' });
  }
  return supersede(ctx, mid, { text: routeText(next), route: next, namespace: old.namespace, metadata: options.metadata });
}

/**
 * Points a memory at the new paths of its anchored files after git saw them renamed: one call. A route
 * is replaced by a version with the new paths (superseding it, like updateRoute); another memory keeps
 * its id and gets its anchors moved (re-anchored at HEAD). CONFLICT when none of its files moved.
 */
export async function followFileMoves(ctx: EngineContext, id: string, options: { namespace?: string | undefined; metadata?: Provenance | undefined } = {}): Promise<{ memory: Memory; moved: StaleMark[]; supersedes: string | null }> {
  const mid = validateId(id, 'id');
  const old = await memoryIn(ctx, mid, { namespace: options.namespace });
  if (!old) throw new CairnError('NOT_FOUND', `no memory ${mid} in namespace ${ctx.ns(options.namespace)}`, { field: 'id' });
  const moved = await ctx.code.moves(old);
  if (moved.length === 0) throw new CairnError('CONFLICT', `none of the files memory ${mid} is anchored to has moved`, { field: 'id' });
  if (old.kind === 'route' && old.route) {
    const paths = followMoves(old.route.paths, moved) ?? old.route.paths;
    const r = await updateRoute(ctx, mid, { paths }, options);
    return { memory: r.memory, moved, supersedes: mid };
  }
  const code = await ctx.code.repointed(old, moved);
  const memory = await ctx.store.transaction(async (tx) => {
    const fresh = await tx.getMemory(mid);
    if (!fresh) throw new CairnError('NOT_FOUND', `no memory ${mid}`, { field: 'id' });
    const now = ctx.now();
    const next: Memory = { ...fresh, code, updatedAt: now };
    await emit(tx, next.namespace, { type: 'memory.updated', memory: next }, now);
    return next;
  });
  return { memory, moved, supersedes: null };
}

/**
 * Keeps what was learned on a task as one note linked to it, importance TASK_NOTE_IMPORTANCE. Context
 * shorter than TASK_NOTE_MIN_CHARS characters is not stored (too little to be worth recalling): the
 * result says why and nothing is written.
 */
export async function taskNote(ctx: EngineContext, input: TaskNoteInput): Promise<TaskNoteResult> {
  if (typeof input !== 'object' || input === null) throw new CairnError('INVALID_INPUT', 'task note must be an object');
  const namespace = ctx.ns(input.namespace);
  const taskId = validateTaskId(input.taskId);
  const context = validateText(input.context, 'context');
  const chars = [...context.trim()].length;
  if (chars < TASK_NOTE_MIN_CHARS) {
    return {
      stored: false,
      chars,
      reason: `not stored: the context has ${chars} characters, a task note needs at least ${TASK_NOTE_MIN_CHARS}; say what was done, what was learned and why`,
    };
  }
  const result = await save(ctx, { text: context, kind: 'note', importance: TASK_NOTE_IMPORTANCE, taskId, namespace, metadata: input.metadata });
  return { stored: true, chars, ...result };
}
