// The sign-in throttle: a few failures free, then a wait that doubles with each further failure up to a cap;
// a success or a quiet hour starts an address afresh; addresses are counted apart, and only so many are kept in
// memory. The same rule over the shared counts on PostgreSQL: two replicas' throttles count one address's
// failures together, and failures heard at once are each counted.
import { afterEach, describe, expect, it } from 'vitest';
import { createSignInThrottle, type ThrottleSettings } from '../../src/access/throttle.ts';
import { createManualClock, type ManualClock } from '../../src/clock.ts';
import { migratePostgres } from '../../src/storage/postgres/migrate.ts';
import { createPool } from '../../src/storage/postgres/pool.ts';
import { createPostgresSignInFailures } from '../../src/storage/postgres/sign-in-failures.ts';
import type { SignInFailureStore } from '../../src/storage/sign-in-failures.ts';
import { createTestDatabase } from '../support/postgres.ts';

interface Counts {
  /** A store of the counts; on PostgreSQL each call is another replica's, on the same database. */
  store(): SignInFailureStore | undefined;
  close(): Promise<void>;
}

const engines: { name: string; open(): Promise<Counts> }[] = [
  { name: 'memory (one process)', open: async () => ({ store: () => undefined, close: async () => undefined }) },
  {
    name: 'PostgreSQL (shared by replicas)',
    async open() {
      const database = await createTestDatabase();
      const pools = [createPool(database.url, { max: 4 })];
      await migratePostgres(pools[0]!, 'test');
      return {
        store() {
          const pool = createPool(database.url, { max: 4 });
          pools.push(pool);
          return createPostgresSignInFailures(pool);
        },
        async close() {
          for (const p of pools) await p.end();
          await database.drop();
        },
      };
    },
  },
];

describe.each(engines)('the sign-in throttle, counts in $name', (engine) => {
  let counts: Counts;
  let clock: ManualClock;
  const throttle = (settings: Partial<ThrottleSettings> = {}) => {
    const store = counts.store();
    return createSignInThrottle({ clock, settings, ...(store ? { store } : {}) });
  };
  const setup = async () => {
    counts = await engine.open();
    clock = createManualClock();
  };
  afterEach(async () => {
    await counts?.close();
  });

  it('lets the first five failures pass, then doubles the wait with each one', async () => {
    await setup();
    const t = throttle();
    const waits: number[] = [];
    for (let i = 0; i < 9; i++) waits.push(await t.failed('10.0.0.1'));
    expect(waits).toEqual([0, 0, 0, 0, 0, 1_000, 2_000, 4_000, 8_000]);
    expect(await t.waitMs('10.0.0.1')).toBe(8_000);
  });

  it('counts the wait down with the clock and never waits longer than the cap', async () => {
    await setup();
    const t = throttle({ maxDelayMs: 5_000 });
    for (let i = 0; i < 20; i++) await t.failed('10.0.0.1');
    expect(await t.waitMs('10.0.0.1')).toBe(5_000);
    clock.advance(4_000);
    expect(await t.waitMs('10.0.0.1')).toBe(1_000);
    clock.advance(1_000);
    expect(await t.waitMs('10.0.0.1')).toBe(0);
  });

  it('keeps addresses apart', async () => {
    await setup();
    const t = throttle({ freeFailures: 0 });
    await t.failed('10.0.0.1');
    expect(await t.waitMs('10.0.0.1')).toBe(1_000);
    expect(await t.waitMs('10.0.0.2')).toBe(0);
  });

  it('starts an address afresh after a success, or after a quiet hour', async () => {
    await setup();
    const t = throttle({ freeFailures: 1 });
    await t.failed('a');
    await t.failed('a');
    await t.succeeded('a');
    expect(await t.waitMs('a')).toBe(0);
    expect(await t.failed('a')).toBe(0);
    await t.failed('b');
    await t.failed('b');
    clock.advance(60 * 60_000);
    expect(await t.failed('b')).toBe(0);
  });
});

describe('the sign-in throttle across replicas (PostgreSQL)', () => {
  let counts: Counts;
  afterEach(async () => {
    await counts?.close();
  });

  it("counts one address's failures heard by two replicas together, each of those heard at once too", async () => {
    counts = await engines[1]!.open();
    const clock = createManualClock();
    const [a, b] = [0, 1].map(() => createSignInThrottle({ clock, settings: { freeFailures: 3 }, store: counts.store()! }));
    await Promise.all([a!.failed('10.0.0.9'), b!.failed('10.0.0.9'), a!.failed('10.0.0.9'), b!.failed('10.0.0.9')]);
    // Four failures with three free: the fourth made the address wait, on both replicas.
    expect(await a!.waitMs('10.0.0.9')).toBe(1_000);
    expect(await b!.waitMs('10.0.0.9')).toBe(1_000);
    await b!.succeeded('10.0.0.9');
    expect(await a!.waitMs('10.0.0.9')).toBe(0);
  });
});

describe('the sign-in throttle in memory', () => {
  it('remembers a bounded number of addresses, forgetting the least recent first', async () => {
    const t = createSignInThrottle({ clock: createManualClock(), settings: { freeFailures: 0, maxAddresses: 2 } });
    await t.failed('a');
    await t.failed('b');
    await t.failed('c');
    expect(await Promise.all(['a', 'b', 'c'].map((x) => t.waitMs(x)))).toEqual([0, 1_000, 1_000]);
  });
});
