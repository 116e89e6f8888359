// The console's data port over a processor's stores: its pages (events, dead letters, documents) cut by
// positions it gave out, a position or state it never gave refused by name, dead letters replayed one by one
// or by type (what was not dead said so), a document that failed here retried, and the overview's count of
// events waiting for a mapping (each event once, however many records it lacks).
import { fhirRecordRefs } from '../../src/emr/fhir/refs.ts';
import { describe, expect, it } from 'vitest';
import { createConsoleActions, createConsoleData } from '../../src/console/data-source.ts';
import { createDependencyStatus } from '../../src/status/dependency-status.ts';
import { ValidationError } from '../../src/errors.ts';
import { silentLogger } from '../../src/logger.ts';
import { createDeadLetters } from '../../src/processor/index.ts';
import { createSqliteDocumentStore } from '../../src/storage/sqlite/documents.ts';
import { apiDocument } from '../storage/documents-engines.ts';
import { appointmentEvent, processorFixture } from '../support/processor-fixture.ts';

function consoleOf() {
  const f = processorFixture({ PROCESSOR_MAX_ATTEMPTS: '1' });
  const documents = createSqliteDocumentStore(f.db, f.clock);
  const data = createConsoleData({
    processor: f.stores,
    documents,
    status: createDependencyStatus({ clock: f.clock, logger: silentLogger() }),
    database: { isWritable: () => true, writeFailure: () => undefined },
    metrics: f.metrics,
    clock: f.clock,
    refs: fhirRecordRefs,
    crosswalk: f.stores.crosswalk,
  });
  const actions = createConsoleActions({
    deadLetters: createDeadLetters({ stores: f.stores.deadLetters, logger: silentLogger() }),
    documents,
    logger: silentLogger(),
  });
  return { f, documents, data, actions };
}

describe('the console pages', () => {
  it('pages events newest first by the position each page gives, and refuses one it never gave', async () => {
    const { f, data } = consoleOf();
    const ids = ['apt_1', 'apt_2', 'apt_3'].map((s) => f.store(appointmentEvent({ serviceId: s })));
    const first = await data.events({ limit: 2 });
    expect(first.rows.map((r) => r.eventId)).toEqual([ids[2], ids[1]]);
    const second = await data.events({ limit: 2, after: first.next! });
    expect([second.rows.map((r) => r.eventId), second.next]).toEqual([[ids[0]], null]);
    await expect(data.events({ limit: 2, after: 'nonsense' })).rejects.toThrow(ValidationError);
    await expect(data.events({ limit: 2, state: 'lost' })).rejects.toMatchObject({ field: 'state' });
  });

  it('lists dead letters with their reason, replays a selection and all of a type, saying which were not dead', async () => {
    const { f, data, actions } = consoleOf();
    f.emr.down = true;
    const [a, b, c] = ['apt_1', 'apt_2', 'apt_3'].map((s) => f.store(appointmentEvent({ serviceId: s })));
    await f.processor.runOnce();
    f.emr.down = false;
    const page = await data.deadLetters({ limit: 2 });
    expect(page.rows.map((r) => r.eventId)).toEqual([c, b]);
    expect(page.rows[0]!.reason).toMatch(/^emr_unavailable/);
    expect((await data.deadLetters({ limit: 2, after: page.next! })).rows.map((r) => r.eventId)).toEqual([a]);
    expect((await data.overview()).deadLetters).toBe(3);

    expect(await actions.replay([a!, 'nope'])).toEqual({ replayed: [a], notDead: ['nope'] });
    expect(await actions.replayAllOfType('patient.created')).toEqual({ events: 0 });
    expect(await actions.replayAllOfType('appointment.created')).toEqual({ events: 2 });
    await f.processor.runOnce();
    expect((await data.deadLetters({ limit: 5 })).rows).toEqual([]);
    expect((await data.event(a!))!.history.map((h) => h.state)).toEqual(['received', 'dead', 'replayed', 'applied']);
  });

  it("shows a document's history and retries one that failed here", async () => {
    const { data, actions, documents } = consoleOf();
    await documents.enqueue(apiDocument('lab-1'));
    await documents.recordOutcome('lab-1', { state: 'FAILED', code: 'retries_exhausted', reason: 'gave up' });
    expect(await data.document('lab-1')).toMatchObject({ status: 'FAILED', errorCode: 'retries_exhausted', retryable: true });
    expect(await actions.retryDocument('lab-1')).toEqual({ ok: true });
    const doc = (await data.document('lab-1'))!;
    expect(doc).toMatchObject({ status: 'queued', retryable: false });
    expect(doc.history.map((h) => [h.status, h.detail])).toEqual([
      ['queued', null],
      ['FAILED', 'retries_exhausted'],
      ['retried', null],
    ]);
    expect((await data.documents({ status: 'queued', limit: 5 })).rows.map((r) => r.externalId)).toEqual(['lab-1']);
    expect(await data.document('nope')).toBeUndefined();
  });

  it('counts the events waiting for a mapping once each, and how long the oldest has waited, falling as records are mapped', async () => {
    const { f, data } = consoleOf();
    f.emr.creatable.delete('doctor');
    f.emr.creatable.delete('location');
    expect((await data.overview()).waiting).toEqual({ events: 0, oldestSince: null, ageMs: null });
    const since = f.clock.now();
    for (const s of ['apt_1', 'apt_2', 'apt_3']) f.store(appointmentEvent({ serviceId: s }));
    await f.processor.runOnce();
    f.clock.advance(90_000);
    // Each lacks its doctor and its location: three events, not six.
    expect((await data.overview()).waiting).toEqual({ events: 3, oldestSince: since, ageMs: 90_000 });

    const doctor = f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    const location = f.emr.addMasterRecord({ entityType: 'location', name: 'Test Clinic Room 1' });
    await f.stores.crosswalk.set({ entityType: 'doctor', serviceId: 'doc_1' }, doctor, 'operator', { post: true });
    await f.stores.crosswalk.set({ entityType: 'location', serviceId: 'loc_1' }, location, 'operator', { post: true });
    await f.processor.runOnce();
    expect((await data.overview()).waiting).toEqual({ events: 0, oldestSince: null, ageMs: null });
  });
});
