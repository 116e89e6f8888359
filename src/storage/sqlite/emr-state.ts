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
    putNew: async (key, value) => putNew.run(module, key, value, clock.now()).changes === 1,
  });
}
