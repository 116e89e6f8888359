// The admin API's event reads behind the console: GET /admin/events searches (by eventId, type, serviceId,
// state, received time; newest first, a page at a time; bad parameters refused by name), GET
// /admin/events/:eventId adds the state history and the FHIR references the event wrote, GET
// /admin/stats/minutes gives the last 24 hours per minute, and GET /admin/mappings looks a mapping up both ways.
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app/app.ts';
import { silentLogger } from '../../src/logger.ts';
import { fhirRecordRefs } from '../../src/emr/fhir/refs.ts';
import { createMappingsAdminRouter } from '../../src/mappings/admin-router.ts';
import { createEventsAdminRouter, createProcessorAdminRouter } from '../../src/processor/index.ts';
import { appointmentEvent, processorFixture, type ProcessorFixture } from '../support/processor-fixture.ts';

const TOKEN = 'admin-token-for-tests-0001';
const MINUTE = 60_000;

function adminOf(f: ProcessorFixture) {
  const app = createApp({
    logger: silentLogger(),
    metrics: f.metrics,
    routers: [],
    adminRouters: [
      createProcessorAdminRouter({ deadLetters: f.stores.deadLetters, events: f.stores.events, logger: silentLogger() }),
      createEventsAdminRouter({ events: f.stores.events, clock: f.clock }),
      createMappingsAdminRouter({ lookup: f.stores.mappingLookup, refs: fhirRecordRefs }),
    ],
    adminToken: TOKEN,
    readiness: [],
  });
  return (path: string) =>
    request(app.callback())
      .get(`/admin${path}`)
      .set({ authorization: `Bearer ${TOKEN}` });
}

const ids = (res: { body: { events: { eventId: string }[] } }) => res.body.events.map((e) => e.eventId);

describe('GET /admin/events', () => {
  it('finds events by eventId, type, serviceId, state and time, newest first, a page at a time', async () => {
    const f = processorFixture();
    const t0 = f.clock.now();
    const a = f.store(appointmentEvent({ serviceId: 'apt_A' }));
    f.clock.advance(MINUTE);
    const b = f.store(appointmentEvent({ serviceId: 'apt_B', eventType: 'appointment.cancelled' }));
    const dead = f.store({ eventId: 'ev-dead', eventType: 'appointment.created', occurredAt: '2026-01-15T09:00:00.000Z' });
    await f.processor.runOnce();
    const get = adminOf(f);

    expect(ids(await get('/events'))).toEqual([dead, b, a]);
    expect(ids(await get(`/events?eventId=${a}`))).toEqual([a]);
    expect(ids(await get('/events?eventType=appointment.cancelled'))).toEqual([b]);
    expect(ids(await get('/events?serviceId=apt_A'))).toEqual([a]);
    expect(ids(await get('/events?state=dead'))).toEqual([dead]);
    expect(ids(await get(`/events?since=${new Date(t0 + MINUTE).toISOString()}&state=applied`))).toEqual([b]);
    expect(ids(await get(`/events?until=${new Date(t0 + MINUTE).toISOString()}`))).toEqual([a]);

    const first = await get('/events?limit=2');
    expect(ids(first)).toEqual([dead, b]);
    expect(first.body.events[1]).toEqual({
      eventId: b,
      eventType: 'appointment.cancelled',
      entityKey: 'appointment:apt_B',
      state: 'applied',
      attempts: 1,
      receivedAt: new Date(t0 + MINUTE).toISOString(),
      finishedAt: new Date(t0 + MINUTE).toISOString(),
    });
    const rest = await get(`/events?limit=2&after=${first.body.next}`);
    expect([ids(rest), rest.body.next]).toEqual([[a], null]);
  });

  it('refuses a bad or unknown parameter, naming it', async () => {
    const get = adminOf(processorFixture());
    for (const [query, field] of [
      ['state=gone', 'state'],
      ['limit=0', 'limit'],
      ['since=yesterday', 'since'],
      ['since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z', 'until'],
      ['after=not-a-position', 'after'],
      ['cursor=x', 'cursor'],
    ]) {
      const res = await get(`/events?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error, query).toMatchObject({ code: 'invalid_request', field });
    }
  });
});

describe('GET /admin/events/:eventId', () => {
  it('adds the state history and the FHIR references the event wrote to its processing state', async () => {
    const f = processorFixture({ PROCESSOR_MAX_ATTEMPTS: '4' });
    const receivedAt = f.clock.now();
    f.emr.down = true;
    const id = f.store(appointmentEvent({ serviceId: 'apt_A' }));
    await f.processor.runOnce();
    f.emr.down = false;
    f.clock.advance(10_000);
    await f.processor.runOnce();
    const res = await adminOf(f)(`/events/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ eventId: id, state: 'applied', attempts: 2 });
    expect(res.body.history).toEqual([
      { at: new Date(receivedAt).toISOString(), state: 'received', attempt: 0 },
      { at: new Date(receivedAt).toISOString(), state: 'retrying', attempt: 1, reason: expect.stringMatching(/^emr_unavailable/) },
      { at: new Date(receivedAt + 10_000).toISOString(), state: 'applied', attempt: 2 },
    ]);
    const patient = f.emr.records.patient.get('pat_apt_A')!.id;
    const appointment = f.emr.records.appointment.get('apt_A')!.id;
    expect(res.body.emrRefs).toEqual(expect.arrayContaining([`Patient/${patient}`, `Appointment/${appointment}`]));
    expect(res.body.emrRefs).toHaveLength(4);
    expect(JSON.stringify(res.body)).not.toMatch(/Test Patient|\+1555/);
  });

  it('says whether the body is still stored, and that it was pruned once retention dropped it', async () => {
    const f = processorFixture();
    const id = f.store(appointmentEvent({ serviceId: 'apt_A' }));
    await f.processor.runOnce();
    expect((await adminOf(f)(`/events/${id}`)).body).toMatchObject({ state: 'applied', body: 'stored' });
    f.clock.advance(8 * 24 * 3600_000);
    await f.stores.retention.pruneEvents({ bodiesBefore: f.clock.now(), eventsBefore: 0 });
    expect((await adminOf(f)(`/events/${id}`)).body).toMatchObject({ state: 'applied', body: 'pruned' });
  });
});

describe('GET /admin/stats/minutes', () => {
  it('gives the last 24 hours, one entry per minute, the current minute last', async () => {
    const f = processorFixture();
    f.clock.set(Math.floor(f.clock.now() / MINUTE) * MINUTE + 30_000);
    f.store(appointmentEvent({ serviceId: 'apt_A' }));
    f.store(appointmentEvent({ serviceId: 'apt_B' }));
    await f.processor.runOnce();
    const { body } = await adminOf(f)('/stats/minutes');
    expect(body.minutes).toHaveLength(24 * 60);
    const minute = new Date(Math.floor(f.clock.now() / MINUTE) * MINUTE).toISOString();
    expect(body.minutes.at(-1)).toEqual({ minute, received: 2, applied: 2 });
    expect(body.minutes.slice(0, -1).every((m: { received: number; applied: number }) => m.received === 0 && m.applied === 0)).toBe(true);
  });
});

describe('GET /admin/stats/minutes, with the processor behind', () => {
  it('counts as received what the inbox stored (acknowledged), before the processor has taken it in', async () => {
    const f = processorFixture();
    const start = Math.floor(f.clock.now() / MINUTE) * MINUTE;
    f.clock.set(start + 10_000);
    f.store(appointmentEvent({ serviceId: 'apt_A' }));
    f.clock.set(start + MINUTE + 10_000);
    f.store(appointmentEvent({ serviceId: 'apt_B' }));
    f.store(appointmentEvent({ serviceId: 'apt_C' }));
    // Nothing taken in yet.
    const { body } = await adminOf(f)('/stats/minutes');
    expect(body.minutes.slice(-2)).toEqual([
      { minute: new Date(start).toISOString(), received: 1, applied: 0 },
      { minute: new Date(start + MINUTE).toISOString(), received: 2, applied: 0 },
    ]);
    await f.processor.runOnce();
    const after = (await adminOf(f)('/stats/minutes')).body.minutes.slice(-2);
    expect(after.map((m: { received: number }) => m.received)).toEqual([1, 2]);
    expect(after.at(-1).applied).toBe(3);
  });
});

describe('GET /admin/mappings', () => {
  it("looks a mapping up by the service's id or by the EMR's, the other side with whether the service has it", async () => {
    const f = processorFixture();
    f.store(appointmentEvent({ serviceId: 'apt_A' }));
    await f.processor.runOnce();
    const get = adminOf(f);
    const patient = f.emr.records.patient.get('pat_apt_A')!.id;
    const byService = await get('/mappings?serviceId=pat_apt_A');
    expect(byService.body).toEqual({
      mappings: [{ entityType: 'patient', serviceId: 'pat_apt_A', emrId: patient, emrRef: `Patient/${patient}`, posted: true }],
    });
    expect((await get(`/mappings?emrId=Patient/${patient}`)).body).toEqual(byService.body);
    expect((await get(`/mappings?emrId=${patient}`)).body).toEqual(byService.body);
    expect((await get(`/mappings?emrId=Practitioner/${patient}`)).body).toEqual({ mappings: [] });
  });

  it('needs exactly one of serviceId and emrId', async () => {
    const get = adminOf(processorFixture());
    for (const query of ['', '?serviceId=a&emrId=b', '?name=x']) expect((await get(`/mappings${query}`)).status, query).toBe(400);
  });
});
