/**
 * SQL that takes a SQLite store's schema back from migration 14 (the instruction-check column), for tests that
 * rewind a database to an older version and reopen it.
 */
export const UNDO_MIGRATION_14 = 'ALTER TABLE memories DROP COLUMN instruction_check;';

/** The same from migration 12 (the likely-replaces column and its index), and every later column with it. */
export const UNDO_MIGRATION_12 = `${UNDO_MIGRATION_14} DROP INDEX memories_replacing; ALTER TABLE memories DROP COLUMN likely_replaces;`;
