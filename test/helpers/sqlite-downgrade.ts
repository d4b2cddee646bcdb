/**
 * SQL that takes a SQLite store's schema back from migration 12 (the likely-replaces column and its index),
 * for tests that rewind a database to an older version and reopen it.
 */
export const UNDO_MIGRATION_12 = 'DROP INDEX memories_replacing; ALTER TABLE memories DROP COLUMN likely_replaces;';
