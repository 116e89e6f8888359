// Coordination's contract, on both engines: an exclusive job runs in one replica at a time (another is refused,
// not queued, and may run it once the first has ended, however it ended), and a notification from one replica
// wakes the listeners of every replica for its topic. PostgreSQL's own cases: a replica that dies frees its
// hold, and a listener whose connection is lost comes back by itself.
import { describe, expect, it } from 'vitest';
import type { Coordination } from '../../src/storage/coordination.ts';
import { createPostgresCoordination } from '../../src/storage/postgres/coordination.ts';
import { createPool, type Pool } from '../../src/storage/postgres/pool.ts';
import { createSqliteCoordination } from '../../src/storage/sqlite/coordination.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { waitFor } from '../support/wait.ts';

interface OpenedCoordination {
  /** Two replicas (SQLite: the one process there is, twice). */
  a: Coordination;
  b: Coordination;
  /** Runs SQL as an administrator would (PostgreSQL only). */
  admin?: Pool;
  close(): Promise<void>;
}

interface CoordinationEngine {
  name: 'sqlite' | 'postgres';
  open(): Promise<OpenedCoordination>;
}

const sqlite: CoordinationEngine = {
  name: 'sqlite',
  async open() {
    const c = createSqliteCoordination();
    return { a: c, b: c, close: () => c.close() };
  },
};

const postgres: CoordinationEngine = {
  name: 'postgres',
  async open() {
    const database = await createTestDatabase();
    const pools = [createPool(database.url, { max: 4 }), createPool(database.url, { max: 4 }), createPool(database.url, { max: 2 })];
    const [a, b] = pools.map((pool) => createPostgresCoordination({ pool, url: database.url, reconnectMs: 50 }));
    return {
      a: a!,
      b: b!,
      admin: pools[2]!,
      async close() {
        await a!.close();
        await b!.close();
        for (const p of pools) await p.end();
        await database.drop();
      },
    };
  },
};

async function withEngine(engine: CoordinationEngine, test: (c: OpenedCoordination) => Promise<void>): Promise<void> {
  const c = await engine.open();
  try {
    await test(c);
  } finally {
    await c.close();
  }
}

/** A job that runs until the test lets it end. */
function heldJob<T>(value: T) {
  let started!: () => void;
  let end!: () => void;
  const running = new Promise<void>((r) => {
    started = r;
  });
  const ended = new Promise<void>((r) => {
    end = r;
  });
  return {
    running,
    end,
    job: async () => {
      started();
      await ended;
      return value;
    },
  };
}

describe.each([sqlite, postgres])('coordination on $name', (engine) => {
  it("runs an exclusive job and answers with the job's result", () =>
    withEngine(engine, async (c) => {
      expect(await c.a.exclusive('emr-scan', async () => 42)).toBe(42);
    }));

  it('refuses a second holder while the first runs, and lets it run once the first has ended', () =>
    withEngine(engine, async (c) => {
      const held = heldJob('first');
      const first = c.a.exclusive('emr-scan', held.job);
      await held.running;
      let ran = false;
      expect(
        await c.b.exclusive('emr-scan', async () => {
          ran = true;
        }),
      ).toBeUndefined();
      expect(ran).toBe(false);
      // Another name is another job.
      expect(await c.b.exclusive('retention', async () => 'other')).toBe('other');
      held.end();
      expect(await first).toBe('first');
      expect(await c.b.exclusive('emr-scan', async () => 'second')).toBe('second');
    }));

  it('frees the hold when the job fails, passing its error on', () =>
    withEngine(engine, async (c) => {
      await expect(
        c.a.exclusive('emr-scan', async () => {
          throw new Error('scan failed');
        }),
      ).rejects.toThrow('scan failed');
      expect(await c.b.exclusive('emr-scan', async () => 'after')).toBe('after');
    }));

  it("wakes the listeners of every replica for the topic notified, and no other topic's", () =>
    withEngine(engine, async (c) => {
      const woken = { a: 0, b: 0, documents: 0 };
      const stops = [c.a.onWork('events', () => woken.a++), c.b.onWork('events', () => woken.b++), c.b.onWork('documents', () => woken.documents++)];
      // PostgreSQL listens from the first subscription on: notify until the listeners hear.
      await waitFor(() => {
        c.a.notify('events');
        return woken.a > 0 && woken.b > 0;
      }, 5_000);
      expect(woken.documents).toBe(0);
      stops[1]!();
      const before = woken.b;
      const heardByA = woken.a;
      c.b.notify('events');
      await waitFor(() => woken.a > heardByA, 5_000);
      expect(woken.b).toBe(before);
      for (const stop of stops) stop();
    }));
});

describe('coordination on postgres, when a replica or a connection dies', () => {
  it("frees an exclusive job's hold when its holder's connection dies", () =>
    withEngine(postgres, async (c) => {
      const held = heldJob('orphaned');
      const first = c.a.exclusive('emr-scan', held.job);
      await held.running;
      expect(await c.b.exclusive('emr-scan', async () => 'refused')).toBeUndefined();
      // The holder's session ends as a killed replica's would: the server frees its advisory locks.
      // (This database's sessions only: other test files share the server.)
      await c.admin!.query(
        "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
      );
      expect(await waitFor(() => c.b.exclusive('emr-scan', async () => 'taken over'), 5_000)).toBe('taken over');
      held.end();
      expect(await first).toBe('orphaned');
    }));

  it('listens again after its connection is lost, and wakes its listeners once for what it may have missed', () =>
    withEngine(postgres, async (c) => {
      let woken = 0;
      c.b.onWork('events', () => woken++);
      await waitFor(() => {
        c.a.notify('events');
        return woken > 0;
      }, 5_000);
      const before = woken;
      await c.admin!.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'emr-bridge listen' AND datname = current_database()",
      );
      // The reconnection's own wake-up, with no notification sent.
      await waitFor(() => woken > before, 5_000);
      const afterReconnect = woken;
      await waitFor(() => {
        c.a.notify('events');
        return woken > afterReconnect;
      }, 5_000);
    }));
});
