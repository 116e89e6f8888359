// The inbox store's contract, on both engines: a batch is stored in one go with its duplicates flagged (stored
// before, by any replica, or earlier in the same batch), two replicas storing one eventId at once keep one row,
// a stored event wakes the processors, what is stored is counted per minute in the same commit (replicas never
// waiting on each other's count), the probe keeps one row, a read-only database refuses with its code; and the
// receiver's inbox over each store group-commits and answers only after the commit.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { closeDatabase, openDatabase } from '../../src/sqlite/open.ts';
import { UnavailableError } from '../../src/errors.ts';
import { createInbox } from '../../src/inbox/inbox.ts';
import { silentLogger } from '../../src/logger.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import type { Coordination } from '../../src/storage/coordination.ts';
import type { InboxRow, InboxStore } from '../../src/storage/inbox.ts';
import { createPostgresCoordination } from '../../src/storage/postgres/coordination.ts';
import { createPostgresInboxStore } from '../../src/storage/postgres/inbox.ts';
import { migratePostgres } from '../../src/storage/postgres/migrate.ts';
import { createPool, isUnavailable, type Pool } from '../../src/storage/postgres/pool.ts';
import { createSqliteCoordination } from '../../src/storage/sqlite/coordination.ts';
import { createSqliteInboxStore } from '../../src/storage/sqlite/inbox.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { waitFor } from '../support/wait.ts';

interface Replica {
  store: InboxStore;
  coordination: Coordination;
}

interface OpenedInbox {
  /** Two replicas on one database (SQLite: two connections of the one process). */
  a: Replica;
  b: Replica;
  /** A store whose writes the database refuses as read-only. */
  readOnly(): Promise<InboxStore>;
  /** The eventIds stored (sorted). */
  storedIds(): Promise<string[]>;
  probeRows(): Promise<number>;
  /** The code a read-only refusal carries. */
  readOnlyCode: string;
  /** What the inbox counted as received per minute (every replica's summed), and what its rows say, oldest first. */
  counted(): Promise<{ minute: number; received: number }[]>;
  rowsPerMinute(): Promise<{ minute: number; received: number }[]>;
  close(): Promise<void>;
}

/** The inbox rows by the minute of their received time: what inbox_minutes must always say. */
const PER_MINUTE_OF_ROWS = 'SELECT (received_at / 60000) * 60000 AS minute, count(*) AS received FROM inbox_events GROUP BY 1 ORDER BY 1';

interface InboxEngine {
  name: 'sqlite' | 'postgres';
  open(): Promise<OpenedInbox>;
}

const sqlite: InboxEngine = {
  name: 'sqlite',
  async open() {
    const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-inbox-contract-'));
    const path = join(dir, 'adapter.db');
    const dbs = [openDatabase({ path, migrationsDir: ADAPTER_MIGRATIONS }), openDatabase({ path, migrationsDir: ADAPTER_MIGRATIONS })];
    // One process per SQLite file: both "replicas" share the process's coordination.
    const coordination = createSqliteCoordination();
    const [a, b] = dbs.map((db) => ({ store: createSqliteInboxStore(db, { coordination }), coordination }));
    return {
      a: a!,
      b: b!,
      async readOnly() {
        const db = openDatabase({ path, migrationsDir: ADAPTER_MIGRATIONS, readonly: true });
        dbs.push(db);
        return createSqliteInboxStore(db);
      },
      storedIds: async () => dbs[0]!.prepare('SELECT event_id FROM inbox_events ORDER BY event_id').pluck().all() as string[],
      probeRows: async () => dbs[0]!.prepare('SELECT count(*) FROM store_probe').pluck().get() as number,
      readOnlyCode: 'SQLITE_READONLY',
      counted: async () => dbs[0]!.prepare('SELECT minute, received FROM inbox_minutes ORDER BY minute').all() as { minute: number; received: number }[],
      rowsPerMinute: async () => dbs[0]!.prepare(PER_MINUTE_OF_ROWS).all() as { minute: number; received: number }[],
      async close() {
        await coordination.close();
        for (const db of dbs) await closeDatabase(db);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

const postgres: InboxEngine = {
  name: 'postgres',
  async open() {
    const database = await createTestDatabase();
    const pools: Pool[] = [];
    const coordinations: Coordination[] = [];
    const pool = (url = database.url) => {
      const p = createPool(url, { max: 4 });
      pools.push(p);
      return p;
    };
    await migratePostgres(pool(), 'test');
    const replica = (): Replica => {
      const p = pool();
      const coordination = createPostgresCoordination({ pool: p, url: database.url });
      coordinations.push(coordination);
      return { store: createPostgresInboxStore(p), coordination };
    };
    return {
      a: replica(),
      b: replica(),
      readOnly: async () => createPostgresInboxStore(pool(`${database.url}?options=${encodeURIComponent('-c default_transaction_read_only=on')}`)),
      storedIds: async () => (await pools[0]!.query('SELECT event_id FROM inbox_events ORDER BY event_id')).rows.map((r) => r.event_id),
      probeRows: async () => (await pools[0]!.query('SELECT count(*) AS n FROM store_probe')).rows[0].n,
      readOnlyCode: '25006',
      counted: async () => (await pools[0]!.query('SELECT minute, sum(received)::int AS received FROM inbox_minutes GROUP BY minute ORDER BY minute')).rows,
      rowsPerMinute: async () => (await pools[0]!.query(PER_MINUTE_OF_ROWS.replace('count(*)', 'count(*)::int'))).rows,
      async close() {
        for (const c of coordinations) await c.close();
        for (const p of pools) await p.end();
        await database.drop();
      },
    };
  },
};

let sequence = 0;
const row = (eventId = `evt_${++sequence}`): InboxRow => ({
  eventId,
  eventType: 'appointment.created',
  headers: { 'x-service-event': 'appointment.created' },
  body: Buffer.from(JSON.stringify({ eventId, n: sequence })),
  receivedAt: 1_763_900_000_000 + sequence,
});

/** The store's answer, whichever engine: SQLite's is synchronous, PostgreSQL's a promise. */
const insert = async (store: InboxStore, rows: InboxRow[]) => store.insertBatch(rows);

async function withEngine(engine: InboxEngine, test: (e: OpenedInbox) => Promise<void>): Promise<void> {
  const e = await engine.open();
  try {
    await test(e);
  } finally {
    await e.close();
  }
}

describe.each([sqlite, postgres])('the inbox store on $name', (engine) => {
  it('stores a batch in one go and flags its duplicates: stored before, or earlier in the same batch', () =>
    withEngine(engine, async (e) => {
      const first = row('evt_a');
      expect(await insert(e.a.store, [first, row('evt_b')])).toEqual([false, false]);
      expect(await insert(e.a.store, [row('evt_c'), row('evt_a'), row('evt_c'), row('evt_d')])).toEqual([false, true, true, false]);
      expect(await e.storedIds()).toEqual(['evt_a', 'evt_b', 'evt_c', 'evt_d']);
    }));

  it('keeps one row when two replicas store the same eventIds at once, in any order; exactly one is told it is new', () =>
    withEngine(engine, async (e) => {
      const all: string[] = [];
      // Several rounds, each replica's batch in the other's reverse order: rows locked in batch order could deadlock.
      for (let round = 0; round < 10; round++) {
        const ids = Array.from({ length: 200 }, (_, i) => `evt_same_${round}_${String(i).padStart(3, '0')}`);
        all.push(...ids);
        const [fromA, fromB] = await Promise.all([
          insert(
            e.a.store,
            ids.map((id) => row(id)),
          ),
          insert(
            e.b.store,
            [...ids].reverse().map((id) => row(id)),
          ),
        ]);
        const newInB = [...fromB].reverse();
        for (let i = 0; i < ids.length; i++) expect([fromA[i], newInB[i]].filter((duplicate) => !duplicate)).toHaveLength(1);
      }
      expect(await e.storedIds()).toEqual(all.sort());
    }));

  it("wakes every replica's processor when it stores a new event", () =>
    withEngine(engine, async (e) => {
      let woken = 0;
      const stop = e.b.coordination.onWork('events', () => woken++);
      // PostgreSQL's listening connection is made at the first subscription: events stored before it listens
      // wake nobody, so store until one does.
      await waitFor(async () => {
        await insert(e.a.store, [row()]);
        return woken > 0;
      }, 5_000);
      stop();
    }));

  it('counts what it stored per minute of received time, in the commit that stored it: duplicates not, both replicas summed', () =>
    withEngine(engine, async (e) => {
      const minute = 1_763_900_040_000;
      const at = (eventId: string, ms: number): InboxRow => ({ ...row(eventId), receivedAt: ms });
      // A batch across a minute's end, and back (a clock stepped back): each row counts in its own minute.
      expect(await insert(e.a.store, [at('m_1', minute + 59_000), at('m_2', minute + 60_000), at('m_3', minute + 59_999)])).toEqual([false, false, false]);
      await Promise.all([
        insert(e.a.store, [at('m_4', minute + 61_000), at('m_1', minute + 61_000)]),
        insert(e.b.store, [at('m_5', minute + 62_000), at('m_4', minute + 62_000), at('m_5', minute + 62_000)]),
      ]);
      await expect(insert(await e.readOnly(), [at('m_6', minute)])).rejects.toMatchObject({ code: e.readOnlyCode });
      expect(await e.counted()).toEqual([
        { minute, received: 2 },
        { minute: minute + 60_000, received: 3 },
      ]);
      expect(await e.counted()).toEqual(await e.rowsPerMinute());
    }));

  it('probes with one committed row, and keeps one', () =>
    withEngine(engine, async (e) => {
      await e.a.store.probe(1);
      await e.a.store.probe(2);
      expect(await e.probeRows()).toBe(1);
    }));

  it('refuses a write to a read-only database with its code, storing nothing, and says so when checked', () =>
    withEngine(engine, async (e) => {
      const store = await e.readOnly();
      const refusal = await insert(store, [row('evt_ro')]).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect((refusal as { code?: string }).code).toBe(e.readOnlyCode);
      if (engine.name === 'postgres') expect(isUnavailable(refusal)).toBe(true);
      expect(await e.storedIds()).toEqual([]);
      await expect(Promise.resolve().then(() => store.checkWritable())).rejects.toMatchObject({ code: e.readOnlyCode });
      await expect(Promise.resolve().then(() => e.a.store.checkWritable())).resolves.toBeUndefined();
    }));
});

describe.each([sqlite, postgres])("the receiver's inbox on $name", (engine) => {
  const event = (eventId: string) => ({ eventId, eventType: 'appointment.created', headers: {}, body: Buffer.from(`{"eventId":"${eventId}"}`) });

  it('commits concurrent webhooks in one batch, answering each only after the commit, duplicates as such', () =>
    withEngine(engine, async (e) => {
      const batches: number[] = [];
      const counting: InboxStore = {
        ...e.a.store,
        insertBatch: (rows) => {
          batches.push(rows.length);
          return e.a.store.insertBatch(rows);
        },
      };
      const inbox = createInbox({ store: counting, clock: createManualClock(), logger: silentLogger() });
      const answers = await Promise.all([...Array.from({ length: 50 }, (_, i) => inbox.store(event(`evt_${i}`))), inbox.store(event('evt_0'))]);
      expect(batches).toEqual([51]);
      expect(answers.filter((a) => a.duplicate)).toHaveLength(1);
      expect(answers.at(-1)).toEqual({ duplicate: true });
      expect(await e.storedIds()).toHaveLength(50);
      expect(inbox.isWritable()).toBe(true);
      await inbox.close();
    }));

  it('answers every waiter of a failed commit with UnavailableError (503), and is not writable with the code', () =>
    withEngine(engine, async (e) => {
      const inbox = createInbox({ store: await e.readOnly(), clock: createManualClock(), logger: silentLogger(), probeIntervalMs: 60_000 });
      const outcomes = await Promise.allSettled([inbox.store(event('evt_1')), inbox.store(event('evt_2'))]);
      for (const o of outcomes) {
        expect(o.status).toBe('rejected');
        const err = (o as PromiseRejectedResult).reason;
        expect(err).toBeInstanceOf(UnavailableError);
        expect(err).toMatchObject({ status: 503, code: 'inbox_unavailable' });
      }
      expect(inbox.isWritable()).toBe(false);
      expect(inbox.writeFailure()?.code).toBe(e.readOnlyCode);
      await inbox.close();
    }));
});

describe('the inbox store on postgres, replicas counting at once', () => {
  it("never makes one replica's commit wait for another's: each counts under its own backend's key", async () => {
    const database = await createTestDatabase();
    const pool = createPool(database.url, { max: 4 });
    const held = await pool.connect().catch(async (err: unknown) => {
      await pool.end();
      throw err;
    });
    try {
      await migratePostgres(pool, 'test');
      const minute = 1_763_900_040_000;
      // A batch whose transaction stays open: it holds its counter row (and its inbox rows) until it commits.
      await held.query('BEGIN');
      const inOpenTransaction = createPostgresInboxStore({ query: (q: never) => held.query(q) } as unknown as Pool);
      expect(await inOpenTransaction.insertBatch([{ ...row('held_1'), receivedAt: minute + 1_000 }])).toEqual([false]);
      // Another replica, the same minute: stored and answered while the first has not committed.
      const waited = new Promise((resolve) => setTimeout(resolve, 5_000, 'waited for the other commit'));
      const other = createPostgresInboxStore(pool);
      await expect(Promise.race([other.insertBatch([{ ...row('free_1'), receivedAt: minute + 2_000 }]), waited])).resolves.toEqual([false]);
      await held.query('COMMIT');
      const { rows } = await pool.query('SELECT backend, received::int AS received FROM inbox_minutes WHERE minute = $1', [minute]);
      expect(rows).toHaveLength(2);
      expect(rows.map((r) => r.received)).toEqual([1, 1]);
    } finally {
      held.release();
      await pool.end();
      await database.drop();
    }
  }, 20_000);
});
