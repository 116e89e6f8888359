// The simulator's record store: the quiet-hours release loop, run every 50 ms, reads the held documents through
// an index, whatever number of documents the store holds.
import { afterEach, describe, expect, it } from 'vitest';
import { SIMULATOR_MIGRATIONS } from '../../src/paths.ts';
import { createStore, QUIET_HOLDS_SQL, type SimDocument } from '../../src/simulator/store.ts';
import { closeDatabase, type Db, openDatabase } from '../../src/sqlite/open.ts';

let db: Db | undefined;
afterEach(() => {
  if (db) closeDatabase(db);
  db = undefined;
});

const document = (id: string, change: Partial<SimDocument> = {}) => ({ id, clinicId: 'cl_1', status: 'SENT', ...change }) as SimDocument;

describe('simulator store: quiet-hours holds', () => {
  it('lists only documents held for quiet hours', () => {
    db = openDatabase({ path: ':memory:', migrationsDir: SIMULATOR_MIGRATIONS });
    const store = createStore(db);
    store.put('document', document('doc_sent'));
    store.put('document', document('doc_quiet', { status: 'HELD', heldFor: 'quiet_hours' }));
    store.put('document', document('doc_other_hold', { status: 'HELD', heldFor: 'auto_send' }));
    expect(store.quietHolds().map((d) => d.id)).toEqual(['doc_quiet']);
  });

  it('reads them through the partial index, not a scan of every document', () => {
    db = openDatabase({ path: ':memory:', migrationsDir: SIMULATOR_MIGRATIONS });
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${QUIET_HOLDS_SQL}`).all() as { detail: string }[];
    expect(plan.map((p) => p.detail).join('\n')).toContain('USING INDEX records_quiet_holds');
  });
});
