// Rotation of the sealed columns, on every engine (`data-keys rotate`, ../../src/storage/sealed-values.ts): every
// stored value, under an old key or in clear, ends under the current key and still opens; a row the adapter
// rewrote between the read and the write is left as the adapter wrote it; a run cut short resumes; the key ids
// in use are counted from the values themselves.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createSealer, type Sealer } from '../../src/sealing/sealer.ts';
import { migratePostgres } from '../../src/storage/postgres/migrate.ts';
import { createPool } from '../../src/storage/postgres/pool.ts';
import { openPostgresSealedValues } from '../../src/storage/postgres/sealed-values.ts';
import { INBOX_BODY, OUTBOX_REQUEST, type SealedColumn, sealContext } from '../../src/storage/sealed-contexts.ts';
import { keyIdOfHead, keyIdsInUse, rotateSealedValues, type SealedValueStore } from '../../src/storage/sealed-values.ts';
import { openSqliteSealedValues } from '../../src/storage/sqlite/sealed-values.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { keySetOf } from '../sealing/builders.ts';
import { createTestDatabase } from '../support/postgres.ts';

/** A database with the adapter's schema, raw SQL into it (`?` placeholders), and its sealed-value store. */
interface Opened {
  exec(sql: string, ...params: unknown[]): Promise<Record<string, unknown>[]>;
  values: SealedValueStore;
  close(): Promise<void>;
}

const engines: { name: string; open(): Promise<Opened> }[] = [
  {
    name: 'sqlite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-rotate-'));
      const db = openDatabase({ path: join(dir, 'a.db'), migrationsDir: ADAPTER_MIGRATIONS, checkpoints: false });
      const values = openSqliteSealedValues(join(dir, 'a.db'));
      return {
        async exec(sql, ...params) {
          const s = db.prepare(sql);
          if (s.reader) return s.all(...params) as Record<string, unknown>[];
          s.run(...params);
          return [];
        },
        values,
        async close() {
          await values.close();
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
      await migratePostgres(pool, 'test');
      const values = openPostgresSealedValues(database.url);
      return {
        async exec(sql, ...params) {
          let n = 0;
          return (
            await pool.query(
              sql.replace(/\?/g, () => `$${++n}`),
              params,
            )
          ).rows;
        },
        values,
        async close() {
          await values.close();
          await pool.end();
          await database.drop();
        },
      };
    },
  },
];

const sealerOf = async (...kids: string[]): Promise<Sealer> => createSealer(await keySetOf(...kids));

describe.each(engines)('rotating sealed values on $name', (engine) => {
  let e: Opened;
  afterEach(async () => {
    await e?.close();
  });

  /** An inbox row and an outbox row whose values `sealer` wrote (in clear with a clear sealer). */
  async function rows(sealer: Sealer, n: number) {
    for (let i = 0; i < n; i++) {
      const eventId = `ev-${String(i).padStart(3, '0')}`;
      const body = await sealer.sealBytes(Buffer.from(JSON.stringify({ eventId, name: `Patient ${i}` })), sealContext(INBOX_BODY, eventId));
      await e.exec("INSERT INTO inbox_events (event_id, event_type, headers, body, received_at) VALUES (?, 'appointment.created', '{}', ?, 0)", eventId, body);
      const externalId = `doc-${String(i).padStart(3, '0')}`;
      const request = await sealer.seal(JSON.stringify({ externalId, label: `Label ${i}` }), sealContext(OUTBOX_REQUEST, externalId));
      await e.exec(
        "INSERT INTO outbox_documents (external_id, document_type, source, request, state, created_at, updated_at) VALUES (?, 'lab_report', 'emr', ?, 'queued', 0, 0)",
        externalId,
        request,
      );
    }
  }
  const openAll = async (sealer: Sealer, column: SealedColumn) => {
    const opened: string[] = [];
    for (const row of await e.values.heads(column, '', 1000)) {
      const value = await e.values.value(column, row.key);
      opened.push((await sealer.open(value!, sealContext(column, row.key))).toString('utf8'));
    }
    return opened;
  };

  it('re-seals every value under the current key, values in clear included, and the old key is no longer in use', async () => {
    e = await engine.open();
    await rows(await sealerOf('k-a'), 3);
    await e.exec(
      "INSERT INTO inbox_events (event_id, event_type, headers, body, received_at) VALUES ('ev-clear', 'x', '{}', ?, 0)",
      Buffer.from('{"clear":1}'),
    );
    expect(Object.fromEntries(await keyIdsInUse(e.values))).toEqual({ 'k-a': 6, clear: 1 });

    const result = await rotateSealedValues(e.values, await sealerOf('k-b', 'k-a'));
    expect(result).toEqual({ resealed: 7, changedMeanwhile: 0 });
    expect(Object.fromEntries(await keyIdsInUse(e.values))).toEqual({ 'k-b': 7 });
    const onlyB = await sealerOf('k-b');
    expect((await openAll(onlyB, INBOX_BODY)).map((b) => JSON.parse(b))).toEqual([
      { eventId: 'ev-000', name: 'Patient 0' },
      { eventId: 'ev-001', name: 'Patient 1' },
      { eventId: 'ev-002', name: 'Patient 2' },
      { clear: 1 },
    ]);
    expect((await openAll(onlyB, OUTBOX_REQUEST)).length).toBe(3);
  });

  it('resumes after a run cut short, re-sealing only what is left', async () => {
    e = await engine.open();
    await rows(await sealerOf('k-a'), 5);
    const b = await sealerOf('k-b', 'k-a');
    const cut = new Error('killed');
    await expect(
      rotateSealedValues(e.values, b, {
        pageSize: 2,
        onProgress: (p) => {
          if (p.seen >= 2) throw cut;
        },
      }),
    ).rejects.toBe(cut);
    expect((await keyIdsInUse(e.values)).get('k-b')).toBe(2);
    expect(await rotateSealedValues(e.values, b, { pageSize: 2 })).toEqual({ resealed: 8, changedMeanwhile: 0 });
    expect(Object.fromEntries(await keyIdsInUse(e.values))).toEqual({ 'k-b': 10 });
  });

  it('leaves a row the adapter rewrote between the read and the write as the adapter wrote it', async () => {
    e = await engine.open();
    await rows(await sealerOf('k-a'), 1);
    const b = await sealerOf('k-b', 'k-a');
    const previous = await e.values.value(INBOX_BODY, 'ev-000');
    const next = await b.sealBytes(Buffer.from('{"fresh":1}'), sealContext(INBOX_BODY, 'ev-000'));
    await e.exec('UPDATE inbox_events SET body = NULL WHERE event_id = ?', 'ev-000');
    expect(await e.values.replace(INBOX_BODY, [{ key: 'ev-000', previous: previous!, next }])).toBe(0);
    expect(await e.values.value(INBOX_BODY, 'ev-000')).toBeNull();
  });

  it('stops at a value whose key it lacks, naming the key id, and writes nothing of that page', async () => {
    e = await engine.open();
    await rows(await sealerOf('k-lost'), 1);
    await expect(rotateSealedValues(e.values, await sealerOf('k-b'))).rejects.toMatchObject({ code: 'data_key_missing', kid: 'k-lost' });
    expect(keyIdOfHead((await e.values.heads(INBOX_BODY, '', 1))[0]!.head)).toBe('k-lost');
  });
});
