// The console sessions' store on every engine: a session read back as stored (found by its token's hash only),
// idle and absolute expiry at the boundary, expired sessions deleted when met and at each new sign-in, the idle
// time only moving forward, and the one-time message taken once (also by two replicas at once).
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/sqlite/open.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import type { ConsoleSessionStore, StoredSession } from '../../src/storage/console-sessions.ts';
import { createPostgresConsoleSessionStore } from '../../src/storage/postgres/console-sessions.ts';
import { migratePostgres } from '../../src/storage/postgres/migrate.ts';
import { createPool } from '../../src/storage/postgres/pool.ts';
import { createSqliteConsoleSessionStore } from '../../src/storage/sqlite/console-sessions.ts';
import { createTestDatabase } from '../support/postgres.ts';

interface Opened {
  store: ConsoleSessionStore;
  /** A second replica's store on the same database (PostgreSQL); the same store on SQLite (one process). */
  other: ConsoleSessionStore;
  rows(): Promise<number>;
  close(): Promise<void>;
}

const engines: { name: string; open(): Promise<Opened> }[] = [
  {
    name: 'sqlite',
    async open() {
      const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
      const store = createSqliteConsoleSessionStore(db);
      return {
        store,
        other: store,
        rows: async () => db.prepare('SELECT count(*) FROM console_sessions').pluck().get() as number,
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
      const otherPool = createPool(database.url, { max: 2 });
      await migratePostgres(pool, 'test');
      return {
        store: createPostgresConsoleSessionStore(pool),
        other: createPostgresConsoleSessionStore(otherPool),
        rows: async () => Number((await pool.query('SELECT count(*) AS n FROM console_sessions')).rows[0].n),
        async close() {
          await pool.end();
          await otherPool.end();
          await database.drop();
        },
      };
    },
  },
];

const T0 = Date.parse('2026-01-15T10:00:00Z');
const MIN = 60_000;
const expiry = { idleMs: 30 * MIN, lifetimeMs: 12 * 60 * MIN };
const session = (o: Partial<StoredSession> = {}): StoredSession => ({
  tokenHash: 'hash-a',
  actor: { name: 'night-desk', role: 'operator' },
  csrf: 'csrf-a',
  createdAt: T0,
  lastSeenAt: T0,
  ...o,
});

describe.each(engines)('the console session store on $name', (engine) => {
  let e: Opened;
  afterEach(async () => {
    await e?.close();
  });

  it('reads a session back as stored, by its hash only, from any replica', async () => {
    e = await engine.open();
    await e.store.create(session({ actor: { name: 'day-viewer', role: 'viewer' } }), T0, expiry);
    expect(await e.other.find('hash-a', T0 + MIN, expiry)).toEqual(session({ actor: { name: 'day-viewer', role: 'viewer' } }));
    expect(await e.other.find('hash-b', T0 + MIN, expiry)).toBeUndefined();
  });

  it('ends a session idle for the idle timeout, and deletes it when met', async () => {
    e = await engine.open();
    await e.store.create(session(), T0, expiry);
    expect(await e.store.find('hash-a', T0 + 30 * MIN - 1, expiry)).toBeDefined();
    expect(await e.store.find('hash-a', T0 + 30 * MIN, expiry)).toBeUndefined();
    expect(await e.rows()).toBe(0);
  });

  it('restarts the idle time when touched, never moving it back, and ends a session at its lifetime even in use', async () => {
    e = await engine.open();
    await e.store.create(session(), T0, expiry);
    for (let at = T0 + 20 * MIN; at < T0 + 12 * 60 * MIN; at += 20 * MIN) {
      expect(await e.store.find('hash-a', at, expiry)).toBeDefined();
      await e.store.touch('hash-a', at);
      await e.other.touch('hash-a', at - 10 * MIN); // a replica's late write does not shorten it
    }
    expect(await e.store.find('hash-a', T0 + 12 * 60 * MIN, expiry)).toBeUndefined();
  });

  it('deletes every expired session when a new one is stored, and only those', async () => {
    e = await engine.open();
    await e.store.create(session({ tokenHash: 'old' }), T0, expiry);
    await e.store.create(session({ tokenHash: 'recent', createdAt: T0 + 20 * MIN, lastSeenAt: T0 + 20 * MIN }), T0 + 20 * MIN, expiry);
    expect(await e.rows()).toBe(2);
    const now = T0 + 31 * MIN;
    await e.store.create(session({ tokenHash: 'new', createdAt: now, lastSeenAt: now }), now, expiry);
    expect(await e.rows()).toBe(2);
    expect(await e.store.find('recent', now, expiry)).toBeDefined();
    expect(await e.store.find('old', now, expiry)).toBeUndefined();
  });

  it('ends a session at once', async () => {
    e = await engine.open();
    await e.store.create(session(), T0, expiry);
    await e.other.end('hash-a');
    expect(await e.store.find('hash-a', T0, expiry)).toBeUndefined();
  });

  it('keeps a one-time message until it is taken, once, even by two replicas at once', async () => {
    e = await engine.open();
    await e.store.create(session(), T0, expiry);
    expect(await e.store.takeFlash('hash-a')).toBeUndefined();
    await e.store.setFlash('hash-a', 'Replayed 2 of 2.');
    expect((await e.other.find('hash-a', T0, expiry))?.flash).toBe('Replayed 2 of 2.');
    const taken = await Promise.all([e.store.takeFlash('hash-a'), e.other.takeFlash('hash-a')]);
    expect(taken.filter((t) => t !== undefined)).toEqual(['Replayed 2 of 2.']);
    expect((await e.store.find('hash-a', T0, expiry))?.flash).toBeUndefined();
  });
});
