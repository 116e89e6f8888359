// The sealed columns of a SQLite file, for `data-keys rotate` and `backup` (../sealed-values.ts). A connection of
// its own beside `serve`'s (WAL: readers never wait; a page's rewrite waits its turn for the write lock like
// any commit). Table and column names come from ../sealed-contexts.ts, never from input.
import Database from 'better-sqlite3';
import type { SealedColumn } from '../sealed-contexts.ts';
import { HEAD_CHARS, type SealedValueStore, type ValueHead } from '../sealed-values.ts';

const asText = (v: string | Buffer) => (typeof v === 'string' ? v : v.toString('latin1'));

export function openSqliteSealedValues(path: string, opts: { readonly?: boolean } = {}): SealedValueStore {
  const db = new Database(path, { readonly: opts.readonly ?? false, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  if (!opts.readonly) db.pragma('secure_delete = ON');
  const sql = (c: SealedColumn) => ({
    heads: db.prepare(
      `SELECT ${c.key} AS key, substr(${c.column}, 1, ${HEAD_CHARS}) AS head FROM ${c.table} WHERE ${c.column} IS NOT NULL AND ${c.key} > ? ORDER BY ${c.key} LIMIT ?`,
    ),
    value: db.prepare(`SELECT ${c.column} FROM ${c.table} WHERE ${c.key} = ?`).pluck(),
    replace: db.prepare(`UPDATE ${c.table} SET ${c.column} = ? WHERE ${c.key} = ? AND ${c.column} = ?`),
    count: db.prepare(`SELECT count(*) FROM ${c.table} WHERE ${c.column} IS NOT NULL`).pluck(),
  });
  const statements = new Map<SealedColumn, ReturnType<typeof sql>>();
  const of = (c: SealedColumn) => statements.get(c) ?? statements.set(c, sql(c)).get(c)!;
  return {
    heads: async (c, after, limit) =>
      (of(c).heads.all(after, limit) as { key: string; head: string | Buffer }[]).map((r): ValueHead => ({ key: r.key, head: asText(r.head) })),
    value: async (c, key) => (of(c).value.get(key) as string | Buffer | undefined) ?? null,
    replace: async (c, replacements) =>
      db.transaction(() => replacements.reduce((n, r) => n + of(c).replace.run(r.next, r.key, r.previous).changes, 0)).immediate(),
    count: async (c) => of(c).count.get() as number,
    async close() {
      db.close();
    },
  };
}
