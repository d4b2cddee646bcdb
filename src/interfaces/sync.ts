/**
 * The folder `cairn sync` keeps memories in (`.cairn/` at the repository's top level) and the per-clone
 * record of what it held after the last sync. Implemented by the git adapter (src/adapters/git/).
 */
export interface MemoryFolder {
  /** Where the files live, for messages (e.g. `/repo/.cairn`). */
  readonly location: string;
  /** Every memory file of the folder: file name (`<id>.md`) → text. Empty when the folder does not exist. */
  read(): Promise<Map<string, string>>;
  /** Writes a file whole (atomically: a crash leaves the old or the new text, never a mix). */
  write(name: string, text: string): Promise<void>;
  /** Removes a file; nothing when it is already gone. */
  remove(name: string): Promise<void>;
  /** File name → SHA-256 of its text after the last sync of this clone; null before the first. */
  readBase(): Promise<Record<string, string> | null>;
  writeBase(base: Record<string, string>): Promise<void>;
}
