// EMR modules' own state in SQLite (../emr-state.ts): one statement each, its own short transaction.
import type { Clock } from '../../clock.ts';
import type { Db } from '../../sqlite/open.ts';
import type { EmrStateStores } from '../emr-state.ts';

export function createSqliteEmrState(db: Db, clock: Clock): EmrStateStores {
  const get = db.prepare('SELECT value FROM emr_state WHERE module = ? AND key = ?').pluck();
  const put = db.prepare(
    'INSERT INTO emr_state (module, key, value, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (module, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
  );
  const putNew = db.prepare('INSERT INTO emr_state (module, key, value, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (module, key) DO NOTHING');
  // The prefix is matched as a range (prefix <= key < prefix + U+FFFF), so no LIKE wildcard needs escaping.
  const prune = db.prepare('DELETE FROM emr_state WHERE module = ? AND key >= ? AND key < ? AND updated_at < ?');
  const putMany = db.transaction((module: string, entries: readonly (readonly [string, string])[], at: number) => {
    for (const [key, value] of entries) put.run(module, key, value, at);
  });
  return (module) => ({
    get: async (key) => (get.get(module, key) as string | undefined) ?? undefined,
    async getMany(keys) {
      const found = new Map<string, string>();
      for (const key of keys) {
        const value = get.get(module, key) as string | undefined;
        if (value !== undefined) found.set(key, value);
      }
      return found;
    },
    put: async (key, value) => void put.run(module, key, value, clock.now()),
    putMany: async (entries) => void putMany.immediate(module, entries, clock.now()),
    putNew: async (key, value) => putNew.run(module, key, value, clock.now()).changes === 1,
    pruneBefore: async (prefix, cutoffMs) => prune.run(module, prefix, `${prefix}\uffff`, cutoffMs).changes,
  });
}
