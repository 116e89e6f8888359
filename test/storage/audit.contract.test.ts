// The audit trail's store on every engine: entries read back as written, newest first, filtered by actor,
// action, target and time and paged by id; pruned only before the cutoff, targets with them; ids never reused.
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/sqlite/open.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import type { AuditEntry, AuditStore } from '../../src/storage/audit.ts';
import { createPostgresAuditStore } from '../../src/storage/postgres/audit.ts';
import { migratePostgres } from '../../src/storage/postgres/migrate.ts';
import { createPool } from '../../src/storage/postgres/pool.ts';
import { createSqliteAuditStore } from '../../src/storage/sqlite/audit.ts';
import { createTestDatabase } from '../support/postgres.ts';

interface Opened {
  store: AuditStore;
  count(table: 'audit_log' | 'audit_targets'): Promise<number>;
  close(): Promise<void>;
}

const engines: { name: string; open(): Promise<Opened> }[] = [
  {
    name: 'sqlite',
    async open() {
      const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
      return {
        store: createSqliteAuditStore(db),
        count: async (table) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number,
        close: async () => {
          db.close();
        },
      };
    },
  },
  {
    name: 'postgres',
    async open() {
      const database = await createTestDatabase();
      const pool = createPool(database.url, { max: 2 });
      await migratePostgres(pool, 'test');
      return {
        store: createPostgresAuditStore(pool),
        count: async (table) => Number((await pool.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n),
        async close() {
          await pool.end();
          await database.drop();
        },
      };
    },
  },
];

const T0 = Date.parse('2026-01-15T10:00:00Z');
const entry = (o: Partial<AuditEntry> = {}): AuditEntry => ({
  actor: 'night-desk',
  door: 'api',
  action: 'dead_letter.replay',
  targets: ['evt_1'],
  from: '10.0.0.7',
  outcome: 'ok',
  ...o,
});

describe.each(engines)('the audit store on $name', (engine) => {
  let e: Opened;
  afterEach(async () => {
    await e?.close();
  });

  it('reads entries back as written, newest first', async () => {
    e = await engine.open();
    const first = await e.store.record({ ...entry(), at: T0 });
    const second = await e.store.record({ ...entry({ actor: '-', door: 'cli', action: 'sign_in', targets: [], outcome: 'refused' }), at: T0 + 1 });
    expect(second).toBeGreaterThan(first);
    expect(await e.store.page({ limit: 10 })).toEqual([
      { id: second, at: T0 + 1, actor: '-', door: 'cli', action: 'sign_in', targets: [], from: '10.0.0.7', outcome: 'refused' },
      { id: first, at: T0, actor: 'night-desk', door: 'api', action: 'dead_letter.replay', targets: ['evt_1'], from: '10.0.0.7', outcome: 'ok' },
    ]);
  });

  it('filters by actor, action, target and time, and pages by id', async () => {
    e = await engine.open();
    const ids: number[] = [];
    ids.push(await e.store.record({ ...entry({ actor: 'a', targets: ['evt_1', 'evt_2'] }), at: T0 }));
    ids.push(await e.store.record({ ...entry({ actor: 'b', action: 'document.retry', targets: ['doc_1'] }), at: T0 + 1000 }));
    ids.push(await e.store.record({ ...entry({ actor: 'a', action: 'dead_letter.dismiss', targets: ['evt_2'] }), at: T0 + 2000 }));
    ids.push(await e.store.record({ ...entry({ actor: 'a', targets: ['evt_3'] }), at: T0 + 3000 }));
    const idsOf = async (q: Parameters<AuditStore['page']>[0]) => (await e.store.page(q)).map((r) => r.id);
    const [i1, i2, i3, i4] = ids as [number, number, number, number];

    expect(await idsOf({ actor: 'a', limit: 10 })).toEqual([i4, i3, i1]);
    expect(await idsOf({ action: 'document.retry', limit: 10 })).toEqual([i2]);
    expect(await idsOf({ target: 'evt_2', limit: 10 })).toEqual([i3, i1]);
    expect(await idsOf({ since: T0 + 1000, until: T0 + 3000, limit: 10 })).toEqual([i3, i2]);
    expect(await idsOf({ actor: 'a', action: 'dead_letter.replay', target: 'evt_1', limit: 10 })).toEqual([i1]);
    expect(await idsOf({ limit: 2 })).toEqual([i4, i3]);
    expect(await idsOf({ before: i3, limit: 2 })).toEqual([i2, i1]);
    expect(await idsOf({ target: 'nobody', limit: 10 })).toEqual([]);
  });

  it('prunes only the entries written before the cutoff, their targets with them', async () => {
    e = await engine.open();
    await e.store.record({ ...entry({ targets: ['old_1', 'old_2'] }), at: T0 });
    const kept = await e.store.record({ ...entry({ targets: ['new_1'] }), at: T0 + 10 });
    expect(await e.store.prune(T0)).toBe(0);
    expect(await e.store.prune(T0 + 10)).toBe(1);
    expect((await e.store.page({ limit: 10 })).map((r) => r.id)).toEqual([kept]);
    expect(await e.count('audit_targets')).toBe(1);
    expect(await e.store.page({ target: 'old_1', limit: 10 })).toEqual([]);
  });

  it('never reuses an id once older entries are pruned, so a page position stays meaningful', async () => {
    e = await engine.open();
    const a = await e.store.record({ ...entry(), at: T0 });
    const b = await e.store.record({ ...entry(), at: T0 });
    expect(await e.store.prune(T0 + 1)).toBe(2);
    expect(await e.count('audit_log')).toBe(0);
    expect(await e.store.record({ ...entry(), at: T0 + 2 })).toBeGreaterThan(Math.max(a, b));
  });

  it('keeps a target named twice once', async () => {
    e = await engine.open();
    const id = await e.store.record({ ...entry({ targets: ['evt_1', 'evt_1'] }), at: T0 });
    expect((await e.store.page({ target: 'evt_1', limit: 10 })).map((r) => r.id)).toEqual([id]);
    expect(await e.count('audit_targets')).toBe(1);
  });
});
