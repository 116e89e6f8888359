// EMR modules' own state in SQLite (../emr-state.ts). Writes go through the connection's commit queue
// (src/sqlite/commit-queue.ts): the writes of the events in flight share a commit, and a lazy one (an HL7
// port's note that a message was acknowledged) waits up to LAZY_HOLD_MS for company, usually the mapping the
// EMR's next notification brings. Committed one by one, these notes were an fsync each, most of serve's
// time on the MLLP benchmark.
import type { Clock } from '../../clock.ts';
import { type CommitQueue, createCommitQueue } from '../../sqlite/commit-queue.ts';
import type { Db } from '../../sqlite/open.ts';
import type { EmrStateStores, StateEntries } from '../emr-state.ts';

/** How long a lazy write may wait for another to share its commit. */
export const LAZY_HOLD_MS = 5;

/** The statements that write emr_state, inside the caller's transaction: for this store and for ./mappings.ts. */
export function createEmrStateRows(db: Db, clock: Clock) {
  const put = db.prepare(
    'INSERT INTO emr_state (module, key, value, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (module, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
  );
  const putNew = db.prepare('INSERT INTO emr_state (module, key, value, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (module, key) DO NOTHING');
  return {
    /** Writes the entries, replacing what is there (`put`) or only where there is nothing (`new`); says how many rows changed. */
    write(module: string, entries: StateEntries, mode: 'put' | 'new' = 'put'): number {
      const statement = mode === 'put' ? put : putNew;
      const at = clock.now();
      let changed = 0;
      for (const [key, value] of entries) changed += statement.run(module, key, value, at).changes;
      return changed;
    },
  };
}

export function createSqliteEmrState(db: Db, clock: Clock, commits: CommitQueue = createCommitQueue(db), rows = createEmrStateRows(db, clock)): EmrStateStores {
  const get = db.prepare('SELECT value FROM emr_state WHERE module = ? AND key = ?').pluck();
  // The prefix is matched as a range (prefix <= key < prefix + U+FFFF), so no LIKE wildcard needs escaping.
  const prune = db.prepare('DELETE FROM emr_state WHERE module = ? AND key >= ? AND key < ? AND updated_at < ?');
  const optionsFor = (opts?: { lazy?: boolean }) => ({ holdMs: opts?.lazy ? LAZY_HOLD_MS : 0 });
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
    put: async (key, value, opts) => void (await commits.run(() => rows.write(module, [[key, value]]), optionsFor(opts))),
    async putMany(entries, opts) {
      if (entries.length) await commits.run(() => rows.write(module, entries), optionsFor(opts));
    },
    putNew: async (key, value) => (await commits.run(() => rows.write(module, [[key, value]], 'new'))) === 1,
    pruneBefore: async (prefix, cutoffMs) => prune.run(module, prefix, `${prefix}\uffff`, cutoffMs).changes,
  });
}
