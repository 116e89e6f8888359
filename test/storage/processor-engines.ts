// The engines the processor's storage contract runs on (test/storage/*.contract.test.ts): each opens a fresh,
// migrated database with a manual clock, builds the processor's stores over it, and stores inbox rows as the
// receiver does. PostgreSQL opens a database of its own per call on the run's test server (../support/
// postgres.ts), and can build a second replica's stores on the same database.
import { randomUUID } from 'node:crypto';
import { createManualClock, type ManualClock } from '../../src/clock.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { migratePostgres } from '../../src/storage/postgres/migrate.ts';
import { createPool, type Pool } from '../../src/storage/postgres/pool.ts';
import { createPostgresInboxStore } from '../../src/storage/postgres/inbox.ts';
import { createPostgresProcessorStores } from '../../src/storage/postgres/processor-stores.ts';
import type { ProcessorStores } from '../../src/storage/processor-stores.ts';
import { createSqliteInboxStore } from '../../src/storage/sqlite/inbox.ts';
import { createSqliteProcessorStores } from '../../src/storage/sqlite/processor-stores.ts';
import type { Sealer } from '../../src/sealing/sealer.ts';
import { INBOX_BODY, sealContext } from '../../src/storage/sealed-contexts.ts';
import { createTestDatabase } from '../support/postgres.ts';

export interface OpenedEngine {
  name: 'sqlite' | 'postgres';
  clock: ManualClock;
  stores: ProcessorStores;
  /** Stores through the receiver's inbox store: an inbox row (not taken in yet), counted as received. Returns its eventId and inbox id. */
  store(body: unknown, eventId?: string): Promise<{ eventId: string; inboxId: number }>;
  /** Runs SQL written with `?` placeholders (numbered for PostgreSQL); returns the rows. */
  query<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  /**
   * The plan of a query written with literals, as text: SQLite's EXPLAIN QUERY PLAN; PostgreSQL's EXPLAIN with
   * sequential scans off (on a few rows a scan is always cheapest: this says whether an index can serve it).
   */
  explain(sql: string): Promise<string>;
  /** A second replica's stores on the same database, with its own pools; PostgreSQL only. */
  replica?(): Promise<ProcessorStores>;
  close(): Promise<void>;
}

export interface Engine {
  name: 'sqlite' | 'postgres';
  /** `sealer`: the stores open bodies with it, and `store` seals them with it as the receiver's inbox does. */
  open(opts?: { sealer?: Sealer }): Promise<OpenedEngine>;
}

const bodyOf = (body: unknown) => Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
/** The bytes the receiver's inbox would write: sealed for the row when a sealer is given. */
const storedBytes = async (body: unknown, eventId: string, sealer: Sealer | undefined) =>
  sealer ? sealer.sealBytes(bodyOf(body), sealContext(INBOX_BODY, eventId)) : bodyOf(body);
const idOf = (body: unknown, eventId: string | undefined) => eventId ?? (body as { eventId?: string }).eventId ?? randomUUID();
const typeOf = (body: unknown) => (body as { eventType?: string }).eventType ?? 'unknown';

const sqlite: Engine = {
  name: 'sqlite',
  async open({ sealer } = {}) {
    const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    const clock = createManualClock();
    const inbox = createSqliteInboxStore(db);
    const inboxId = db.prepare('SELECT id FROM inbox_events WHERE event_id = ?').pluck();
    return {
      name: 'sqlite',
      clock,
      stores: createSqliteProcessorStores(db, clock, sealer),
      async store(body, eventId) {
        const id = idOf(body, eventId);
        inbox.insertBatch([{ eventId: id, eventType: typeOf(body), headers: {}, body: await storedBytes(body, id, sealer), receivedAt: clock.now() }]);
        return { eventId: id, inboxId: inboxId.get(id) as number };
      },
      async query<T>(sql: string, ...params: unknown[]) {
        const statement = db.prepare(sql);
        if (statement.reader) return statement.all(...params) as T[];
        statement.run(...params);
        return [];
      },
      explain: async (sql) => (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join('\n'),
      async close() {
        db.close();
      },
    };
  },
};

const postgres: Engine = {
  name: 'postgres',
  async open({ sealer } = {}) {
    const database = await createTestDatabase();
    const pools: Pool[] = [createPool(database.url, { max: 6 })];
    const pool = pools[0]!;
    await migratePostgres(pool, 'test');
    const clock = createManualClock();
    const opened: ProcessorStores[] = [createPostgresProcessorStores(pool, clock, { lockConnections: 4, ...(sealer ? { sealer } : {}) })];
    const inbox = createPostgresInboxStore(pool);
    return {
      name: 'postgres',
      clock,
      stores: opened[0]!,
      async store(body, eventId) {
        const id = idOf(body, eventId);
        // As the receiver writes it: the inbox row, its intake row and its count in one statement.
        await inbox.insertBatch([{ eventId: id, eventType: typeOf(body), headers: {}, body: await storedBytes(body, id, sealer), receivedAt: clock.now() }]);
        const { rows } = await pool.query<{ id: number }>('SELECT id FROM inbox_events WHERE event_id = $1', [id]);
        return { eventId: id, inboxId: rows[0]!.id };
      },
      async query<T>(sql: string, ...params: unknown[]) {
        let n = 0;
        const { rows } = await pool.query(
          sql.replace(/\?/g, () => `$${++n}`),
          params,
        );
        return rows as T[];
      },
      async explain(sql) {
        const client = await pool.connect();
        try {
          await client.query('SET enable_seqscan = off');
          const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`);
          return rows.map((r) => r['QUERY PLAN']).join('\n');
        } finally {
          client.release(true);
        }
      },
      async replica() {
        const other = createPool(database.url, { max: 6 });
        pools.push(other);
        const stores = createPostgresProcessorStores(other, clock, { lockConnections: 4 });
        opened.push(stores);
        return stores;
      },
      async close() {
        for (const s of opened) await s.close();
        for (const p of pools) await p.end();
        await database.drop();
      },
    };
  },
};

export const engines: Engine[] = [sqlite, postgres];
export const postgresOnly: Engine[] = [postgres];
