// The engines the document store's contract runs on (test/storage/documents*.contract.test.ts): each opens a
// fresh, migrated database with a manual clock and a document store over it. PostgreSQL opens a database of its
// own per call on the run's test server (../support/postgres.ts). Either opens another store on the same
// database: a second replica's (PostgreSQL: its own pool, the same clock), or a restarted process's (SQLite),
// sealing requests with a given sealer (its own data keys) or, without one, writing them in clear.
import { type Clock, createManualClock, type ManualClock } from '../../src/clock.ts';
import type { DocumentRequest } from '../../src/contract/documents.ts';
import { generateKeyFile, importKeySet } from '../../src/sealing/keys.ts';
import { createSealer, type Sealer } from '../../src/sealing/sealer.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import type { DocumentStore, NewDocument } from '../../src/storage/documents.ts';
import { createPostgresDocumentStore } from '../../src/storage/postgres/documents.ts';
import { migratePostgres } from '../../src/storage/postgres/migrate.ts';
import { createPool, type Pool } from '../../src/storage/postgres/pool.ts';
import { createSqliteDocumentStore } from '../../src/storage/sqlite/documents.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { PDF } from '../support/simulator-fixture.ts';

export interface OpenedDocuments {
  name: 'sqlite' | 'postgres';
  clock: ManualClock;
  documents: DocumentStore;
  /** Runs SQL written with `?` placeholders (numbered for PostgreSQL); returns the rows. */
  query<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  /**
   * Another store on the same database, holding nothing in memory: a second replica's, with its own pool
   * (PostgreSQL), or this process's after a restart (SQLite, where one process owns the database). It seals
   * requests with `sealer` (none: in clear).
   */
  replica(sealer?: Sealer): DocumentStore;
  close(): Promise<void>;
}

export interface DocumentEngine {
  name: 'sqlite' | 'postgres';
  open(): Promise<OpenedDocuments>;
}

const sqlite: DocumentEngine = {
  name: 'sqlite',
  async open() {
    const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    const clock = createManualClock();
    return {
      name: 'sqlite',
      clock,
      documents: createSqliteDocumentStore(db, clock),
      replica: (sealer?: Sealer) => createSqliteDocumentStore(db, clock, sealer),
      async query<T>(sql: string, ...params: unknown[]) {
        const statement = db.prepare(sql);
        if (statement.reader) return statement.all(...params) as T[];
        statement.run(...params);
        return [];
      },
      async close() {
        db.close();
      },
    };
  },
};

const postgres: DocumentEngine = {
  name: 'postgres',
  async open() {
    const database = await createTestDatabase();
    const pools: Pool[] = [createPool(database.url, { max: 4 })];
    await migratePostgres(pools[0]!, 'test');
    const clock = createManualClock();
    return {
      name: 'postgres',
      clock,
      documents: createPostgresDocumentStore(pools[0]!, clock),
      async query<T>(sql: string, ...params: unknown[]) {
        let n = 0;
        const { rows } = await pools[0]!.query(
          sql.replace(/\?/g, () => `$${++n}`),
          params,
        );
        return rows as T[];
      },
      replica(sealer?: Sealer) {
        const other = createPool(database.url, { max: 4 });
        pools.push(other);
        return createPostgresDocumentStore(other, clock, sealer);
      },
      async close() {
        for (const p of pools) await p.end();
        await database.drop();
      },
    };
  },
};

export const documentEngines: DocumentEngine[] = [sqlite, postgres];

/** Opens an engine for one test and closes it after, however the test ends. */
export async function withDocuments(engine: DocumentEngine, test: (e: OpenedDocuments) => Promise<void>): Promise<void> {
  const e = await engine.open();
  try {
    await test(e);
  } finally {
    await e.close();
  }
}

/** A checked request, as the pusher stores it. */
export const request = (externalId: string, label = 'Blood count'): DocumentRequest =>
  ({
    externalId,
    patientPhone: '+15550001111',
    patientName: 'Synthetic Patient',
    label,
    file: { base64: PDF.toString('base64'), filename: 'blood.pdf', mimeType: 'application/pdf' },
  }) as DocumentRequest;

/** A document pushed through the admin API; `o` changes one thing. */
export const apiDocument = (externalId: string, o: Partial<NewDocument> = {}): NewDocument => ({
  externalId,
  documentType: 'lab_report',
  source: 'api',
  request: request(externalId),
  ...o,
});

/** A document from the EMR (its status is written back there). */
export const emrDocument = (externalId: string, o: Partial<NewDocument> = {}): NewDocument =>
  apiDocument(externalId, { source: 'emr', emrDocumentId: externalId, emrVersion: '1', ...o });

/** A sealer holding one new data key of its own (DATA_ENCRYPTION=on). */
export const sealerWithNewKey = async (clock: Clock): Promise<Sealer> => createSealer(await importKeySet(generateKeyFile(clock)));
