// How the processor batches its work without giving up a guarantee: a claimed batch's outcomes are written
// in one transaction (and a failed commit repeats only idempotent steps), no more than PROCESSOR_CONCURRENCY
// events are applied at once, the events of a batch not started when an EMR incident or stop() comes are
// handed back untried, each body is parsed once, mapping records asked for together share a commit, and the
// search for the next events reads only open rows.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/sqlite/open.ts';
import { EmrError } from '../../src/emr/errors.ts';
import { ServiceCallError } from '../../src/service-client/errors.ts';
import { silentLogger } from '../../src/logger.ts';
import { ADAPTER_MIGRATIONS } from '../../src/paths.ts';
import { createProcessor } from '../../src/processor/index.ts';
import { createMappingRows, createSqliteMappingStore, type MappingRows } from '../../src/storage/sqlite/mappings.ts';
import { NEXT_EVENTS_SQL } from '../../src/storage/sqlite/processing.ts';
import { createSqliteProcessorStores } from '../../src/storage/sqlite/processor-stores.ts';
import { createSqliteEntityVersions } from '../../src/storage/sqlite/versions.ts';
import { appointmentEvent, processorFixture } from '../support/processor-fixture.ts';
import { waitFor } from '../support/wait.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterEach(() => {
  vi.restoreAllMocks();
});

describe('processor batches', () => {
  it('applies many entities in one pass with at most PROCESSOR_CONCURRENCY events at once, each entity in order', async () => {
    const f = processorFixture({ PROCESSOR_CONCURRENCY: '3' });
    let inFlight = 0;
    let most = 0;
    const ensure = f.emr.ensureAppointment.bind(f.emr);
    const update = f.emr.updateAppointment.bind(f.emr);
    const order: string[] = [];
    const slow = async <T>(serviceId: string, status: string, call: () => Promise<T>): Promise<T> => {
      inFlight++;
      most = Math.max(most, inFlight);
      await tick(1);
      order.push(`${serviceId}:${status}`);
      inFlight--;
      return call();
    };
    f.emr.ensureAppointment = (a) => slow(a.serviceId, a.status, () => ensure(a));
    f.emr.updateAppointment = (id, a) => slow(a.serviceId, a.status, () => update(id, a));
    for (let i = 0; i < 20; i++) f.store(appointmentEvent({ serviceId: `apt_${i}`, occurredAt: '2026-01-15T09:00:00.000Z' }));
    for (let i = 0; i < 20; i++)
      f.store(appointmentEvent({ serviceId: `apt_${i}`, eventType: 'appointment.cancelled', status: 'Cancelled', occurredAt: '2026-01-15T09:05:00.000Z' }));

    expect(await f.processor.runOnce()).toBe(40);
    expect(most).toBe(3);
    for (let i = 0; i < 20; i++) expect(order.indexOf(`apt_${i}:Approved`)).toBeLessThan(order.indexOf(`apt_${i}:Cancelled`));
    expect(f.emr.appointments().every((a) => a.status === 'Cancelled')).toBe(true);
    expect(f.db.prepare("SELECT count(*) FROM processing WHERE state = 'applied' AND lease_until IS NULL").pluck().get()).toBe(40);
  });

  it('writes a batch in one transaction: when its commit fails nothing is marked, and the events apply again without duplicates', async () => {
    const f = processorFixture({ PROCESSOR_LEASE_MS: '30000' });
    const ids = [1, 2, 3].map((i) => f.store(appointmentEvent({ serviceId: `apt_${i}` })));
    // The disk refuses the batch's commit (after the EMR took the writes).
    f.db.exec(`CREATE TRIGGER refuse_marks BEFORE UPDATE OF state ON processing WHEN NEW.state = 'applied'
      BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`);
    await expect(f.processor.runOnce()).rejects.toThrow(/disk I\/O error/);
    expect(ids.map((id) => f.state(id)?.state)).toEqual(['pending', 'pending', 'pending']);
    expect(f.db.prepare('SELECT count(*) FROM mapping_outbox').pluck().get()).toBe(0);
    expect(f.emr.records.appointment.size).toBe(3);

    f.db.exec('DROP TRIGGER refuse_marks');
    f.clock.advance(30_000);
    expect(await f.processor.runOnce()).toBe(3);
    expect(ids.map((id) => f.state(id)?.state)).toEqual(['applied', 'applied', 'applied']);
    expect(f.emr.records.appointment.size).toBe(3);
    expect(f.emr.records.patient.size).toBe(3);
    const posted = f.mappingsPut.map((m) => `${m.entityType}:${m.serviceId}`);
    expect(new Set(posted).size).toBe(posted.length);
    expect(posted).toHaveLength(8);
  });

  it('hands back untried, with no attempt spent, the events of a batch not started when an EMR incident begins', async () => {
    const f = processorFixture({ PROCESSOR_CONCURRENCY: '2' });
    const ids = Array.from({ length: 10 }, (_, i) => f.store(appointmentEvent({ serviceId: `apt_${i}` })));
    f.emr.failWith = new EmrError('emr_unauthorized', 'the EMR refuses the adapter', 401);
    await f.processor.runOnce();
    expect(f.emr.calls).toBe(2);
    const rows = ids.map((id) => f.state(id)!);
    expect(rows.every((r) => r.attempts === 0 && r.state !== 'dead')).toBe(true);
    expect(f.db.prepare('SELECT count(*) FROM processing WHERE lease_until IS NOT NULL').pluck().get()).toBe(0);
    // Once the EMR takes the adapter again, every event applies.
    f.emr.failWith = undefined;
    f.clock.advance(61_000);
    expect(await f.processor.runOnce()).toBe(10);
  });

  it('finishes the events in flight on stop() and hands the rest of the batch back', async () => {
    const f = processorFixture({ PROCESSOR_CONCURRENCY: '1', PROCESSOR_POLL_MS: '10' });
    const ids = Array.from({ length: 5 }, (_, i) => f.store(appointmentEvent({ serviceId: `apt_${i}` })));
    // Claimed one by one, so that ensureAppointment is the call held up.
    f.emr.transactions = false;
    const ensure = f.emr.ensureAppointment.bind(f.emr);
    let started!: () => void;
    const first = new Promise<void>((r) => {
      started = r;
    });
    f.emr.ensureAppointment = async (a) => {
      started();
      await tick(20);
      return ensure(a);
    };
    f.processor.start();
    await first;
    await f.processor.stop();
    expect(ids.map((id) => f.state(id)?.state)).toEqual(['applied', 'pending', 'pending', 'pending', 'pending']);
    expect(ids.slice(1).map((id) => f.state(id)?.attempts)).toEqual([0, 0, 0, 0]);
    expect(f.db.prepare('SELECT count(*) FROM processing WHERE lease_until IS NOT NULL').pluck().get()).toBe(0);
  });

  it('starts an event of a claimed batch only while half its lease is left, handing the rest back untried', async () => {
    const f = processorFixture({ PROCESSOR_CONCURRENCY: '1', PROCESSOR_LEASE_MS: '60000' });
    const ids = Array.from({ length: 5 }, (_, i) => f.store(appointmentEvent({ serviceId: `apt_${i}` })));
    // Claimed one by one, so that ensureAppointment is the call that takes long.
    f.emr.transactions = false;
    const ensure = f.emr.ensureAppointment.bind(f.emr);
    let calls = 0;
    // The first call takes most of a minute: past half the batch's lease, so no other event may start on it.
    f.emr.ensureAppointment = async (a) => {
      if (++calls === 1) f.clock.advance(31_000);
      return ensure(a);
    };
    const commit = vi.spyOn(f.stores.queue, 'commit');
    await f.processor.runOnce();
    // What was claimed before the slow call and not started by the time half its lease was gone went back, its attempt refunded...
    expect(commit.mock.calls.flatMap(([outcomes]) => outcomes.map((o) => o.kind))).toContain('release');
    // ...and was claimed again, on a fresh lease: each applied once, on one attempt.
    expect(ids.map((id) => f.state(id)?.state)).toEqual(Array(5).fill('applied'));
    expect(ids.map((id) => f.state(id)?.attempts)).toEqual([1, 1, 1, 1, 1]);
    expect(calls).toBe(5);
  });

  it('drains a backlog larger than one pass (events and mappings) in back-to-back passes, not one pass per PROCESSOR_POLL_MS', async () => {
    // A poll pause of a minute: were the loop to pause after each 500-row intake or 20 mappings posted, the rest
    // would wait for it.
    const f = processorFixture({ PROCESSOR_POLL_MS: '60000' });
    for (let i = 0; i < 1_200; i++) f.store(appointmentEvent({ serviceId: `apt_${i % 300}` }));
    f.processor.start();
    try {
      await waitFor(async () => ((await f.processor.depth()) === 0 ? true : undefined), 10_000);
    } finally {
      await f.processor.stop();
    }
    expect(f.db.prepare("SELECT count(*) FROM processing WHERE state = 'applied'").pluck().get()).toBe(1_200);
    expect(new Set(f.mappingsPut.filter((m) => m.entityType === 'appointment').map((m) => m.serviceId)).size).toBe(300);
  });

  it('does not rush pending mappings at a failing service: each is tried once, then waits for its backoff', async () => {
    // Five posts in flight, four rounds a pass: a batch of 20. The clock stands still, so no backoff runs out.
    const f = processorFixture({ PROCESSOR_POLL_MS: '60000', SERVICE_MAX_CONCURRENCY: '5' });
    f.failMappings(new ServiceCallError({ code: 'unavailable', message: 'down', retryable: true }, 503));
    const ids = Array.from({ length: 60 }, (_, i) => f.store(appointmentEvent({ serviceId: `apt_${i}` })));
    f.processor.start();
    try {
      await waitFor(() => (ids.every((id) => f.state(id)?.state === 'applied') ? true : undefined));
      await tick(200);
    } finally {
      await f.processor.stop();
    }
    const attempts = f.db.prepare('SELECT attempts FROM mapping_outbox').pluck().all() as number[];
    expect(attempts.length).toBeGreaterThan(20);
    // Posted as the events were applied (each wake-up a pass over what is due), never again before its backoff.
    expect(attempts.filter((n) => n > 0).length).toBeGreaterThanOrEqual(20);
    expect(Math.max(...attempts)).toBe(1);
  });

  it('pauses PROCESSOR_POLL_MS after a pass whose intake took less than a full batch', async () => {
    const f = processorFixture({ PROCESSOR_POLL_MS: '60000' });
    const intake = vi.spyOn(f.stores.queue, 'intake');
    f.store(appointmentEvent());
    f.processor.start();
    try {
      await waitFor(async () => ((await f.processor.depth()) === 0 ? true : undefined));
      await tick(50);
      // The pass takes in again, at its end, what arrived while it ran; after it, the loop pauses.
      const taken = intake.mock.calls.length;
      f.store(appointmentEvent());
      await tick(200);
      expect(intake).toHaveBeenCalledTimes(taken);
    } finally {
      await f.processor.stop();
    }
  });

  it('parses each stored body once: a claim uses the event validated when it was taken in', async () => {
    const f = processorFixture();
    const bodies = Array.from({ length: 5 }, (_, i) => appointmentEvent({ serviceId: `apt_${i}` }));
    for (const b of bodies) f.store(b);
    const parse = vi.spyOn(JSON, 'parse');
    expect(await f.processor.runOnce()).toBe(5);
    for (const b of bodies) expect(parse.mock.calls.filter(([text]) => typeof text === 'string' && text.includes(b.eventId as string))).toHaveLength(1);
  });

  it('parses the stored body again when the event was taken in by another processor (a restart)', async () => {
    const f = processorFixture();
    const id = f.store(appointmentEvent());
    // This processor takes the event in, but the EMR refuses it, so it is not applied...
    f.emr.failWith = new EmrError('emr_unauthorized', 'the EMR refuses the adapter', 401);
    await f.processor.runOnce();
    f.emr.failWith = undefined;
    // ...and the next process (a fresh processor on the same database) applies it from the stored body.
    const next = createProcessor({
      stores: createSqliteProcessorStores(f.db, f.clock),
      clock: f.clock,
      logger: silentLogger(),
      emr: f.emr,
      config: parseConfig({}),
      serviceClient: { putMapping: async () => undefined },
      documentEvents: { apply: async () => undefined },
    });
    f.clock.advance(61_000);
    expect(await next.runOnce()).toBe(1);
    expect(f.state(id)?.state).toBe('applied');
    expect(f.emr.appointments()).toHaveLength(1);
  });

  it('finds the next events through the open rows only, never the applied ones kept for dedupe', () => {
    const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${NEXT_EVENTS_SQL}`).all({ now: 0, limit: 8 }) as { detail: string }[]).map((r) => r.detail);
    expect(plan[0]).toBe('SCAN p USING INDEX processing_open_order');
    // processing_unfinished: the open rows and the waiting ones (a waiting event heads its entity), never finished ones.
    expect(plan.some((d) => d.includes('USING INDEX processing_unfinished (entity_key=?)'))).toBe(true);
  });
});

describe('mapping records on SQLite', () => {
  it('commits the records asked for together in one transaction; the first record for an entity stands', async () => {
    const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    const clock = createManualClock();
    const inTransaction: boolean[] = [];
    const stored = new Map<string, string>();
    const rows: MappingRows = {
      find: (t, s) => stored.get(`${t}:${s}`),
      record(t, s, emrId) {
        inTransaction.push(db.inTransaction);
        if (!stored.has(`${t}:${s}`)) stored.set(`${t}:${s}`, emrId);
        return stored.get(`${t}:${s}`)!;
      },
      enqueue: () => undefined,
    };
    const records = createSqliteMappingStore(db, clock, rows);
    const ids = await Promise.all([
      records.record('patient', 'pat_1', 'P1'),
      records.record('doctor', 'doc_1', 'D1'),
      records.record('patient', 'pat_1', 'P2'),
    ]);
    expect(ids).toEqual(['P1', 'D1', 'P1']);
    expect(inTransaction).toEqual([true, true, true]);
  });

  it('reads a mapping from the store once, then from memory; an unknown one is asked for every time', async () => {
    const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    const clock = createManualClock();
    const real = createMappingRows(db, clock);
    let finds = 0;
    const rows: MappingRows = {
      ...real,
      find: (t, s) => {
        finds++;
        return real.find(t, s);
      },
    };
    const records = createSqliteMappingStore(db, clock, rows);
    expect(await records.find('doctor', 'doc_1')).toBeUndefined();
    expect(await records.find('doctor', 'doc_1')).toBeUndefined();
    expect(finds).toBe(2);
    real.record('doctor', 'doc_1', 'D1');
    expect(await records.find('doctor', 'doc_1')).toBe('D1');
    expect(await records.find('doctor', 'doc_1')).toBe('D1');
    expect(finds).toBe(3);
    expect(await records.record('location', 'loc_1', 'L1')).toBe('L1');
    expect(await records.find('location', 'loc_1')).toBe('L1');
    expect(finds).toBe(3);
  });
});

describe('entity versions in memory (SQLite)', () => {
  it('never runs ahead of the disk: a version written in a transaction that rolls back is not seen', async () => {
    const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    const versions = createSqliteEntityVersions(db);
    const v1 = { occurredAt: '2026-01-15T09:00:00.000Z', hash: 'h1' };
    const stored1 = db.transaction(() => versions.write('patient:p', v1, 'e1'))();
    versions.settle('patient:p', stored1);
    expect(await versions.newest('patient:p')).toEqual(v1);

    const failing = db.transaction(() => {
      versions.write('patient:p', { occurredAt: '2026-01-15T10:00:00.000Z', hash: null }, 'e2');
      throw new Error('disk I/O error');
    });
    expect(() => failing()).toThrow('disk I/O error');
    expect(await versions.newest('patient:p')).toEqual(v1);
  });

  it('remembers what the upsert stored: a newer time keeps the last digest when it brings none, an older one changes nothing', async () => {
    const db = openDatabase({ path: ':memory:', migrationsDir: ADAPTER_MIGRATIONS });
    const versions = createSqliteEntityVersions(db);
    const onDisk = db.prepare('SELECT occurred_at AS occurredAt, snapshot_hash AS hash FROM entity_versions WHERE entity_key = ?');
    const write = (occurredAt: string, hash: string | null) => {
      const stored = db.transaction(() => versions.write('patient:p', { occurredAt, hash }, 'e'))();
      versions.settle('patient:p', stored);
      return stored;
    };
    expect(write('2026-01-15T09:00:00.000Z', 'h1')).toEqual(onDisk.get('patient:p'));
    expect(write('2026-01-15T10:00:00.000Z', null)).toEqual({ occurredAt: '2026-01-15T10:00:00.000Z', hash: 'h1' });
    expect(write('2026-01-15T08:00:00.000Z', 'h0')).toEqual({ occurredAt: '2026-01-15T10:00:00.000Z', hash: 'h1' });
    expect(await versions.newest('patient:p')).toEqual(onDisk.get('patient:p'));
  });
});
