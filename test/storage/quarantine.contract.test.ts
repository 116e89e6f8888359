// The quarantine's store on every engine (../../src/storage/quarantine.ts): a webhook kept sealed (a raw read finds
// no marker), bounded by the capacity it is given, once per eventId (and not beside the inbox's); applied into the
// inbox once, as if received now, only when its size fits the limit, its body opening for the inbox row; dismissed
// with who and why; the body dropped either way, the row kept until retention prunes it. The rotation and backup's key
// report page it.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock, type ManualClock } from '../../src/clock.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { SEALED_PREFIX } from '../../src/sealing/format.ts';
import { createSealer, type Sealer } from '../../src/sealing/sealer.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { migratePostgres } from '../../src/storage/postgres/migrate.ts';
import { createPool, type Pool } from '../../src/storage/postgres/pool.ts';
import { createPostgresProcessorStores } from '../../src/storage/postgres/processor-stores.ts';
import { createPostgresQuarantineStore } from '../../src/storage/postgres/quarantine.ts';
import { openPostgresSealedValues } from '../../src/storage/postgres/sealed-values.ts';
import type { ProcessorStores } from '../../src/storage/processor-stores.ts';
import type { QuarantineEntry, QuarantineStore } from '../../src/storage/quarantine.ts';
import { INBOX_BODY, QUARANTINE_BODY, sealContext } from '../../src/storage/sealed-contexts.ts';
import { keyIdsInUse, rotateSealedValues, type SealedValueStore } from '../../src/storage/sealed-values.ts';
import { createSqliteProcessorStores } from '../../src/storage/sqlite/processor-stores.ts';
import { createSqliteQuarantineStore } from '../../src/storage/sqlite/quarantine.ts';
import { openSqliteSealedValues } from '../../src/storage/sqlite/sealed-values.ts';
import { keySetOf } from '../sealing/builders.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { appointmentEventBody } from '../support/webhooks.ts';

const MARKER_NAME = 'Qwertzu Quarantinename';
const MARKER_PHONE = '+15550009876';

interface Opened {
  clock: ManualClock;
  quarantine: QuarantineStore;
  /** A second replica's quarantine on the same database (PostgreSQL only). */
  replica?: QuarantineStore;
  processor: ProcessorStores;
  query<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  sealedValues(): SealedValueStore;
  close(): Promise<void>;
}

const engines: { name: string; open(sealer: Sealer): Promise<Opened> }[] = [
  {
    name: 'sqlite',
    async open(sealer) {
      const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-quarantine-'));
      const path = join(dir, 'a.db');
      const db = openDatabase({ path, migrationsDir: ADAPTER_MIGRATIONS, checkpoints: false });
      const clock = createManualClock();
      const values: SealedValueStore[] = [];
      return {
        clock,
        quarantine: createSqliteQuarantineStore(db, clock, sealer),
        processor: createSqliteProcessorStores(db, clock, sealer),
        async query<T>(sql: string, ...params: unknown[]) {
          const s = db.prepare(sql);
          if (s.reader) return s.all(...params) as T[];
          s.run(...params);
          return [];
        },
        sealedValues: () => values[values.push(openSqliteSealedValues(path)) - 1]!,
        async close() {
          for (const v of values) await v.close();
          db.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: 'postgres',
    async open(sealer) {
      const database = await createTestDatabase();
      const pools: Pool[] = [createPool(database.url, { max: 4 }), createPool(database.url, { max: 4 })];
      await migratePostgres(pools[0]!, 'test');
      const clock = createManualClock();
      const processor = createPostgresProcessorStores(pools[0]!, clock, { lockConnections: 2, sealer });
      const values: SealedValueStore[] = [];
      return {
        clock,
        quarantine: createPostgresQuarantineStore(pools[0]!, clock, sealer),
        replica: createPostgresQuarantineStore(pools[1]!, clock, sealer),
        processor,
        async query<T>(sql: string, ...params: unknown[]) {
          let n = 0;
          const { rows } = await pools[0]!.query(
            sql.replace(/\?/g, () => `$${++n}`),
            params,
          );
          return rows as T[];
        },
        sealedValues: () => values[values.push(openPostgresSealedValues(database.url)) - 1]!,
        async close() {
          for (const v of values) await v.close();
          await processor.close();
          for (const p of pools) await p.end();
          await database.drop();
        },
      };
    },
  },
];

const sealerOf = async (...kids: string[]): Promise<Sealer> => createSealer(await keySetOf(...kids));

/** A webhook of about `size` bytes whose patient carries the markers a raw read must never find. */
function entry(size = 4096, eventId: string = randomUUID()): QuarantineEntry {
  const event = appointmentEventBody({ eventId }) as Record<string, unknown> & { patient: Record<string, unknown>; appointment: Record<string, unknown> };
  const body = {
    ...event,
    patient: { ...event.patient, name: MARKER_NAME, phone: MARKER_PHONE },
    appointment: { ...event.appointment, notes: 'n'.repeat(Math.max(0, size - 900)) },
  };
  return {
    eventId,
    eventType: 'appointment.created',
    headers: { 'x-service-event-id': eventId, 'x-service-event-type': 'appointment.created' },
    body: Buffer.from(JSON.stringify(body)),
    receivedAt: 1_763_900_000_000,
  };
}

const MiB = 1024 * 1024;

describe.each(engines)('the quarantine on $name', (engine) => {
  let e: Opened;
  let sealer: Sealer;
  afterEach(async () => {
    await e?.close();
  });
  const open = async () => {
    sealer = await sealerOf('k-a');
    e = await engine.open(sealer);
  };
  const rawBody = async (eventId: string) =>
    (await e.query<{ body: Uint8Array | null }>('SELECT body FROM webhook_quarantine WHERE event_id = ?', eventId))[0]?.body ?? null;

  it('keeps a webhook sealed for its row, counted against the capacity, shown without its body', async () => {
    await open();
    const w = entry(2 * MiB);
    expect(await e.quarantine.admit(w, 256 * MiB)).toBe('stored');
    const raw = Buffer.from((await rawBody(w.eventId))!);
    expect(raw.toString('latin1').startsWith(SEALED_PREFIX)).toBe(true);
    expect(raw.includes(MARKER_NAME)).toBe(false);
    expect(raw.includes(MARKER_PHONE)).toBe(false);
    expect(sealer.open(raw, sealContext(QUARANTINE_BODY, w.eventId)).equals(Buffer.from(w.body))).toBe(true);
    expect(await e.quarantine.usage()).toEqual({ events: 1, bytes: raw.length });
    const shown = await e.quarantine.get(w.eventId);
    expect(shown).toEqual({
      eventId: w.eventId,
      eventType: 'appointment.created',
      headers: w.headers,
      size: w.body.byteLength,
      receivedAt: w.receivedAt,
      state: 'quarantined',
      bodyStored: true,
    });
    expect(JSON.stringify(shown)).not.toContain(MARKER_NAME);
  });

  it('keeps an eventId once, and not beside the inbox holding it', async () => {
    await open();
    const w = entry();
    expect(await e.quarantine.whereIs(w.eventId)).toBeUndefined();
    expect(await e.quarantine.admit(w, MiB)).toBe('stored');
    expect(await e.quarantine.admit(w, MiB)).toBe('duplicate');
    expect(await e.quarantine.whereIs(w.eventId)).toBe('quarantine');
    const inInbox = entry();
    await e.query("INSERT INTO inbox_events (event_id, event_type, headers, body, received_at) VALUES (?, 't', '{}', NULL, 1)", inInbox.eventId);
    expect(await e.quarantine.whereIs(inInbox.eventId)).toBe('inbox');
    expect(await e.quarantine.admit(inInbox, MiB)).toBe('in_inbox');
    expect((await e.query('SELECT event_id FROM webhook_quarantine')).length).toBe(1);
  });

  it('refuses what would take the stored bodies past the capacity, keeping nothing of it', async () => {
    await open();
    const first = entry(100_000);
    expect(await e.quarantine.admit(first, 250_000)).toBe('stored');
    const { bytes } = await e.quarantine.usage();
    const second = entry(200_000);
    expect(await e.quarantine.admit(second, 250_000)).toBe('full');
    expect(await e.quarantine.get(second.eventId)).toBeUndefined();
    expect(await e.quarantine.usage()).toEqual({ events: 1, bytes });
    // Room again once the first is dismissed (its body dropped).
    expect(await e.quarantine.dismiss(first.eventId, 'sent again smaller', 'ops')).toBe(true);
    expect(await e.quarantine.admit(second, 250_000)).toBe('stored');
  });

  it('applies an event into the inbox once, as if received now, only when the limit lets it in', async () => {
    await open();
    const w = entry(2 * MiB);
    await e.quarantine.admit(w, 256 * MiB);
    e.clock.set(1_763_900_100_000);

    const refused = await e.quarantine.apply(w.eventId, { maxBodyBytes: 256 * 1024, by: 'ops' });
    expect(refused).toMatchObject({ outcome: 'too_large', event: { state: 'quarantined', size: w.body.byteLength } });
    expect(await e.query('SELECT event_id FROM inbox_events')).toEqual([]);

    const applied = await e.quarantine.apply(w.eventId, { maxBodyBytes: 4 * MiB, by: 'ops' });
    expect(applied).toMatchObject({
      outcome: 'applied',
      inbox: 'stored',
      event: { state: 'applied', bodyStored: false, applied: { by: 'ops', at: 1_763_900_100_000 } },
    });
    const [row] = await e.query<{ event_type: string; body: Uint8Array; received_at: number; headers: string }>(
      'SELECT event_type, body, received_at, headers FROM inbox_events WHERE event_id = ?',
      w.eventId,
    );
    expect(row).toMatchObject({ event_type: 'appointment.created', received_at: 1_763_900_100_000 });
    expect(JSON.parse(row!.headers)).toEqual(w.headers);
    const inboxRaw = Buffer.from(row!.body);
    expect(inboxRaw.includes(MARKER_NAME)).toBe(false);
    expect(sealer.open(inboxRaw, sealContext(INBOX_BODY, w.eventId)).equals(Buffer.from(w.body))).toBe(true);
    expect(await rawBody(w.eventId)).toBeNull();
    expect(await e.quarantine.usage()).toEqual({ events: 0, bytes: 0 });

    // Never twice: a second apply finds it applied, and the inbox holds one row.
    expect(await e.quarantine.apply(w.eventId, { maxBodyBytes: 4 * MiB, by: 'ops' })).toMatchObject({
      outcome: 'not_quarantined',
      event: { state: 'applied' },
    });
    expect((await e.query('SELECT event_id FROM inbox_events')).length).toBe(1);
    // Counted as received now, once (what the console shows as received: inbox rows by their received time).
    expect(await e.processor.events.perMinute(1_763_900_040_000, 1_763_900_160_000)).toEqual([{ minute: 1_763_900_100_000, received: 1, applied: 0 }]);
    // The processor takes it in once, parsed from its inbox row.
    const intake = await e.processor.queue.intake();
    expect(intake.events.map((x) => x.event.eventId)).toEqual([w.eventId]);
    expect((await e.processor.queue.intake()).events).toEqual([]);
    // A late repeat of the eventId is known (the row stays).
    expect(await e.quarantine.admit(w, 256 * MiB)).toBe('in_inbox');
    expect(await e.quarantine.apply('no-such-event', { maxBodyBytes: 4 * MiB, by: 'ops' })).toEqual({ outcome: 'not_found' });
  });

  it('marks an event applied without storing it again when the inbox holds its eventId already', async () => {
    await open();
    const w = entry();
    await e.quarantine.admit(w, MiB);
    await e.query("INSERT INTO inbox_events (event_id, event_type, headers, body, received_at) VALUES (?, 't', '{}', NULL, 1)", w.eventId);
    expect(await e.quarantine.apply(w.eventId, { maxBodyBytes: MiB, by: 'ops' })).toMatchObject({ outcome: 'applied', inbox: 'duplicate' });
    expect(await e.query('SELECT event_type FROM inbox_events')).toEqual([{ event_type: 't' }]);
    // Not stored again, so not received again.
    expect(await e.query('SELECT minute FROM inbox_minutes')).toEqual([]);
  });

  it('dismisses with who, why and when, drops the body and keeps the row; a dismissed one is never applied', async () => {
    await open();
    const w = entry();
    await e.quarantine.admit(w, MiB);
    e.clock.set(1_763_900_200_000);
    expect(await e.quarantine.dismiss(w.eventId, 'a test event', 'ops')).toBe(true);
    expect(await e.quarantine.dismiss(w.eventId, 'again', 'ops')).toBe(false);
    expect(await e.quarantine.get(w.eventId)).toMatchObject({
      state: 'dismissed',
      bodyStored: false,
      dismissal: { reason: 'a test event', by: 'ops', at: new Date(1_763_900_200_000).toISOString() },
    });
    expect(await rawBody(w.eventId)).toBeNull();
    expect(await e.quarantine.apply(w.eventId, { maxBodyBytes: MiB, by: 'ops' })).toMatchObject({ outcome: 'not_quarantined' });
    expect(await e.quarantine.admit(w, MiB)).toBe('duplicate');
  });

  it('prunes the rows applied or dismissed before the cutoff, never one still quarantined', async () => {
    await open();
    const [kept, applied, dismissed, late] = [entry(), entry(), entry(), entry()];
    for (const w of [kept, applied, dismissed, late]) await e.quarantine.admit(w, MiB);
    e.clock.set(1_763_900_100_000);
    await e.quarantine.apply(applied.eventId, { maxBodyBytes: MiB, by: 'ops' });
    await e.quarantine.dismiss(dismissed.eventId, 'a test event', 'ops');
    e.clock.set(1_763_900_300_000);
    await e.quarantine.dismiss(late.eventId, 'dismissed after the cutoff', 'ops');
    expect(await e.quarantine.prune(1_763_900_200_000)).toBe(2);
    const left = await e.query<{ event_id: string }>('SELECT event_id FROM webhook_quarantine ORDER BY id');
    expect(left.map((r) => r.event_id)).toEqual([kept.eventId, late.eventId]);
    expect(await e.quarantine.prune(Number.MAX_SAFE_INTEGER)).toBe(1);
    expect(await e.quarantine.get(kept.eventId)).toMatchObject({ state: 'quarantined', bodyStored: true });
  });

  it('pages by state in arrival order, filtered by type and received time', async () => {
    await open();
    const ws = [entry(), entry(), entry(), { ...entry(), eventType: 'patient.updated', receivedAt: 1_763_900_500_000 }];
    for (const w of ws) await e.quarantine.admit(w, MiB);
    await e.quarantine.dismiss(ws[1]!.eventId, 'no', 'ops');
    const first = await e.quarantine.page({ state: 'quarantined', afterId: 0, limit: 2 });
    expect(first.map((r) => r.event.eventId)).toEqual([ws[0]!.eventId, ws[2]!.eventId]);
    const rest = await e.quarantine.page({ state: 'quarantined', afterId: first[1]!.id, limit: 2 });
    expect(rest.map((r) => r.event.eventId)).toEqual([ws[3]!.eventId]);
    expect((await e.quarantine.page({ state: 'dismissed', afterId: 0, limit: 10 })).map((r) => r.event.eventId)).toEqual([ws[1]!.eventId]);
    expect((await e.quarantine.page({ state: 'quarantined', afterId: 0, limit: 10, type: 'patient.updated' })).map((r) => r.event.eventId)).toEqual([
      ws[3]!.eventId,
    ]);
    expect((await e.quarantine.page({ state: 'quarantined', afterId: 0, limit: 10, since: 1_763_900_400_000 })).length).toBe(1);
    expect((await e.quarantine.page({ state: 'quarantined', afterId: 0, limit: 10, until: 1_763_900_400_000 })).length).toBe(2);
  });

  it('is re-sealed by a key rotation and counted in the key report, and still applies', async () => {
    await open();
    const w = entry();
    await e.quarantine.admit(w, MiB);
    const values = e.sealedValues();
    expect(await keyIdsInUse(values)).toEqual(new Map([['k-a', 1]]));
    const rotated = await sealerOf('k-b', 'k-a');
    expect((await rotateSealedValues(values, rotated)).resealed).toBe(1);
    expect(await keyIdsInUse(values)).toEqual(new Map([['k-b', 1]]));
    // This process was given k-a alone: the store would not open it; one with both keys applies it.
    const raw = Buffer.from((await rawBody(w.eventId))!);
    expect(rotated.open(raw, sealContext(QUARANTINE_BODY, w.eventId)).equals(Buffer.from(w.body))).toBe(true);
  });
});

describe.each(engines.filter((x) => x.name === 'postgres'))('the quarantine shared by replicas on $name', (engine) => {
  let e: Opened;
  afterEach(async () => {
    await e?.close();
  });

  it('lets two replicas fill the last room once: one admission is kept, the other is full', async () => {
    e = await engine.open(await sealerOf('k-a'));
    const [a, b] = [entry(100_000), entry(100_000)];
    const outcomes = await Promise.all([e.quarantine.admit(a, 150_000), e.replica!.admit(b, 150_000)]);
    expect(outcomes.sort()).toEqual(['full', 'stored']);
    expect((await e.quarantine.usage()).events).toBe(1);
  });

  it('applies an event once when two replicas apply it at the same moment', async () => {
    e = await engine.open(await sealerOf('k-a'));
    const w = entry();
    await e.quarantine.admit(w, MiB);
    const outcomes = await Promise.all([
      e.quarantine.apply(w.eventId, { maxBodyBytes: MiB, by: 'a' }),
      e.replica!.apply(w.eventId, { maxBodyBytes: MiB, by: 'b' }),
    ]);
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(['applied', 'not_quarantined']);
    expect((await e.query('SELECT event_id FROM inbox_intake JOIN inbox_events ON id = inbox_id')).length).toBe(1);
  });
});
