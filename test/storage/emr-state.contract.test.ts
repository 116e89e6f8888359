// The EMR modules' own store on every engine: values read back by module and key, one module's keys apart from
// another's, a write replacing the value, several written in one go, and putNew deciding once between two
// replicas which of them took a key first, pruning the keys of one prefix written before a cutoff, and (SQLite)
// the writes of one turn of the event loop committed together.
import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import type { EmrStateStores } from '../../src/storage/emr-state.ts';
import { createPostgresEmrState } from '../../src/storage/postgres/emr-state.ts';
import { migratePostgres } from '../../src/storage/postgres/migrate.ts';
import { createPool } from '../../src/storage/postgres/pool.ts';
import { createSqliteEmrState } from '../../src/storage/sqlite/emr-state.ts';
import { createTestDatabase } from '../support/postgres.ts';

interface Opened {
  stores: EmrStateStores;
  /** A second replica's stores on the same database (PostgreSQL); the same on SQLite (one process). */
  other: EmrStateStores;
  close(): Promise<void>;
}

const T0 = Date.parse('2026-01-15T10:00:00Z');
let now = T0;
const clock = { now: () => now };

const engines: { name: string; open(): Promise<Opened> }[] = [
  {
    name: 'sqlite',
    async open() {
      const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
      const stores = createSqliteEmrState(db, clock);
      return { stores, other: stores, close: async () => void db.close() };
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
        stores: createPostgresEmrState(pool, clock),
        other: createPostgresEmrState(otherPool, clock),
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
  describe(`EMR modules' state on '${engine.name}'`, () => {
    let e: Opened | undefined;
    afterEach(async () => {
      await e?.close();
      e = undefined;
    });

    it('reads back what was written, by module and key, and a new value replaces the old', async () => {
      e = await engine.open();
      const hl7 = e.stores('hl7v2');
      await hl7.put('mrn:pat_1', 'MRN000001');
      expect(await hl7.get('mrn:pat_1')).toBe('MRN000001');
      expect(await e.stores('other').get('mrn:pat_1')).toBeUndefined();
      await hl7.put('mrn:pat_1', 'MRN000002');
      expect(await e.other('hl7v2').get('mrn:pat_1')).toBe('MRN000002');
      expect(await hl7.get('missing')).toBeUndefined();
    });

    it('writes several values at once and reads several back, the found ones only', async () => {
      e = await engine.open();
      const hl7 = e.stores('hl7v2');
      await hl7.putMany([
        ['a', '1'],
        ['b', '2'],
      ]);
      await hl7.putMany([
        ['b', '3'],
        ['c', '4'],
      ]);
      await hl7.putMany([]);
      expect(await hl7.getMany(['a', 'b', 'c', 'd'])).toEqual(
        new Map([
          ['a', '1'],
          ['b', '3'],
          ['c', '4'],
        ]),
      );
    });

    it('lets one of two replicas take a key first, and never overwrites it', async () => {
      e = await engine.open();
      const [first, second] = await Promise.all([e.stores('hl7v2').putNew('in:EMR|HOSPITAL|1', 'A'), e.other('hl7v2').putNew('in:EMR|HOSPITAL|1', 'B')]);
      expect([first, second].filter(Boolean)).toHaveLength(1);
      expect(await e.stores('hl7v2').get('in:EMR|HOSPITAL|1')).toBe(first ? 'A' : 'B');
      expect(await e.stores('hl7v2').putNew('in:EMR|HOSPITAL|1', 'C')).toBe(false);
    });

    it('prunes the keys of one prefix written before the cutoff, and nothing else', async () => {
      e = await engine.open();
      const hl7 = e.stores('hl7v2');
      now = T0 - 40 * 86_400_000;
      await hl7.putMany([
        ['in:EMR|HOSPITAL|old', 'AA'],
        ['ack:patient:pat_1', '1'],
        ['in%:like-wildcard-not-a-prefix', 'x'],
      ]);
      await e.stores('other').put('in:EMR|HOSPITAL|old', 'AA');
      now = T0;
      await hl7.put('in:EMR|HOSPITAL|new', 'AA');
      expect(await hl7.pruneBefore('in:', T0 - 30 * 86_400_000)).toBe(1);
      expect(await hl7.getMany(['in:EMR|HOSPITAL|old', 'in:EMR|HOSPITAL|new', 'ack:patient:pat_1', 'in%:like-wildcard-not-a-prefix'])).toEqual(
        new Map([
          ['in:EMR|HOSPITAL|new', 'AA'],
          ['ack:patient:pat_1', '1'],
          ['in%:like-wildcard-not-a-prefix', 'x'],
        ]),
      );
      expect(await e.stores('other').get('in:EMR|HOSPITAL|old')).toBe('AA');
    });
  });
}

describe("EMR modules' state on 'sqlite', written by the events in flight at once", () => {
  it('commits the writes of one turn of the event loop together, each resolving once its commit is made', async () => {
    const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    let commits = 0;
    // Counts the store's transactions as they run (better-sqlite3's are functions with an `immediate` form).
    const counted = new Proxy(db, {
      get(target, prop) {
        if (prop !== 'transaction') {
          const v = Reflect.get(target, prop, target);
          return typeof v === 'function' ? v.bind(target) : v;
        }
        return (fn: (...args: never[]) => unknown) => {
          const tx = target.transaction(fn);
          return Object.assign((...args: never[]) => tx(...args), {
            immediate: (...args: never[]) => {
              commits++;
              return tx.immediate(...args);
            },
          });
        };
      },
    });
    try {
      const hl7 = createSqliteEmrState(counted, clock)('hl7v2');
      const read = db.prepare('SELECT value FROM emr_state WHERE key = ?').pluck();
      const seenAtResolve: unknown[] = [];
      await Promise.all([
        ...Array.from({ length: 20 }, (_, i) => hl7.put(`ack:appointment:apt_${i}`, '1').then(() => seenAtResolve.push(read.get(`ack:appointment:apt_${i}`)))),
        hl7.putMany([
          ['mrn:pat_1', 'M1'],
          ['patient-by-mrn:M1', 'pat_1'],
        ]),
        hl7.putNew('in:EMR|HOSPITAL|1', 'AA'),
      ]);
      expect(commits).toBe(1);
      expect(seenAtResolve).toEqual(Array(20).fill('1'));
      expect(await hl7.putNew('in:EMR|HOSPITAL|1', 'again')).toBe(false);
      expect(commits).toBe(2);
      expect(await hl7.getMany(['mrn:pat_1', 'patient-by-mrn:M1', 'in:EMR|HOSPITAL|1'])).toEqual(
        new Map([
          ['mrn:pat_1', 'M1'],
          ['patient-by-mrn:M1', 'pat_1'],
          ['in:EMR|HOSPITAL|1', 'AA'],
        ]),
      );
    } finally {
      db.close();
    }
  });
});
