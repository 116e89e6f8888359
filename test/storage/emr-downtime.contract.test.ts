// Planned EMR downtime set by operators on every engine: an operator downtime read back by another replica (and
// after a reopen of the same file), replaced by the next one, ended together with the scheduled window ended
// early, and rows that ran out forgotten with the next write.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import type { EmrDowntimeStore } from '../../src/storage/emr-downtime.ts';
import { createPostgresEmrDowntimeStore } from '../../src/storage/postgres/emr-downtime.ts';
import { migratePostgres } from '../../src/storage/postgres/migrate.ts';
import { createPool } from '../../src/storage/postgres/pool.ts';
import { createSqliteEmrDowntimeStore } from '../../src/storage/sqlite/emr-downtime.ts';
import { createTestDatabase } from '../support/postgres.ts';

interface Opened {
  store: EmrDowntimeStore;
  /** Another replica's store on the same database (PostgreSQL); on SQLite, the file opened again (a restart). */
  other(): Promise<EmrDowntimeStore>;
  close(): Promise<void>;
}

const T0 = Date.parse('2026-01-15T10:00:00Z');
const HOUR = 3_600_000;

const engines: { name: string; open(): Promise<Opened> }[] = [
  {
    name: 'sqlite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-downtime-'));
      const path = join(dir, 'adapter.db');
      const db = openDatabase({ path, migrationsDir: ADAPTER_MIGRATIONS });
      const reopened: ReturnType<typeof openDatabase>[] = [];
      return {
        store: createSqliteEmrDowntimeStore(db),
        async other() {
          const again = openDatabase({ path, migrationsDir: ADAPTER_MIGRATIONS });
          reopened.push(again);
          return createSqliteEmrDowntimeStore(again);
        },
        async close() {
          for (const d of reopened) d.close();
          db.close();
          rmSync(dir, { recursive: true, force: true });
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
        store: createPostgresEmrDowntimeStore(pool),
        other: async () => createPostgresEmrDowntimeStore(otherPool),
        async close() {
          await pool.end();
          await otherPool.end();
          await database.drop();
        },
      };
    },
  },
];

for (const engine of engines) {
  describe(`planned EMR downtime on '${engine.name}'`, () => {
    let e: Opened | undefined;
    afterEach(async () => {
      await e?.close();
      e = undefined;
    });

    it('keeps an operator downtime where another replica (or a restart) reads it, the next replacing it', async () => {
      e = await engine.open();
      expect(await e.store.read()).toEqual({});
      await e.store.start({ until: T0 + 2 * HOUR, reason: 'EMR upgrade', setAt: T0 }, T0);
      expect(await (await e.other()).read()).toEqual({ operator: { until: T0 + 2 * HOUR, reason: 'EMR upgrade', setAt: T0 } });
      await e.store.start({ until: T0 + 3 * HOUR, reason: 'upgrade runs late', setAt: T0 + HOUR }, T0 + HOUR);
      expect(await (await e.other()).read()).toEqual({ operator: { until: T0 + 3 * HOUR, reason: 'upgrade runs late', setAt: T0 + HOUR } });
    });

    it('ends it, recording a scheduled window ended early in the same write, and forgets rows that ran out', async () => {
      e = await engine.open();
      await e.store.start({ until: T0 + 2 * HOUR, reason: 'EMR upgrade', setAt: T0 }, T0);
      await e.store.end({ until: T0 + 4 * HOUR, setAt: T0 + HOUR }, T0 + HOUR);
      expect(await e.store.read()).toEqual({ ended: { until: T0 + 4 * HOUR, setAt: T0 + HOUR } });
      await e.store.end(undefined, T0 + 5 * HOUR);
      expect(await e.store.read()).toEqual({});
      await e.store.start({ until: T0 + 2 * HOUR, reason: 'short', setAt: T0 }, T0);
      await e.store.start({ until: T0 + 9 * HOUR, reason: 'later', setAt: T0 + 8 * HOUR }, T0 + 8 * HOUR);
      expect(await (await e.other()).read()).toEqual({ operator: { until: T0 + 9 * HOUR, reason: 'later', setAt: T0 + 8 * HOUR } });
    });
  });
}
