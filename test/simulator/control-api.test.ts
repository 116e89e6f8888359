// The control API reads every body strictly: a key it does not know, at any depth, answers 400
// invalid_request naming it as a dotted path, and nothing changes (a misspelt fault must not look switched on).
import { afterEach, describe, expect, it } from 'vitest';
import { simulatorFixture } from '../support/simulator-fixture.ts';

type F = Awaited<ReturnType<typeof simulatorFixture>>;
let f: F;
afterEach(async () => f?.close());

/** Everything a control call could change: records, queued and attempted deliveries, messages, alerts, meta, the clock. */
const state = (x: F) => ({
  tables: ['records', 'deliveries', 'delivery_log', 'messages', 'alerts', 'meta'].map((t) => x.sim.db.prepare(`SELECT * FROM ${t} ORDER BY rowid`).all()),
  now: x.clock.now(),
  faults: x.sim.getFaults(),
});

describe('control API bodies', () => {
  it('refuses a misspelt fault, naming it, and leaves the faults as they were', async () => {
    f = await simulatorFixture();
    await f.http().post('/_sim/faults').send({ duplicateDeliveries: true }).expect(200);
    const top = await f
      .http()
      .post('/_sim/faults')
      .send({ integrationApi: { status: 503, count: 3 } });
    expect(top.status).toBe(400);
    expect(top.body.error).toMatchObject({ code: 'invalid_request', field: 'integrationApi' });
    const nested = await f
      .http()
      .post('/_sim/faults')
      .send({ integration: { statusCode: 503 } });
    expect(nested.status).toBe(400);
    expect(nested.body.error).toMatchObject({ code: 'invalid_request', field: 'integration.statusCode' });
    expect((await f.http().get('/_sim/faults')).body).toEqual({ duplicateDeliveries: true });
    // The integration API still answers normally: no fault was switched on.
    await f.api('get', 'documents/doc_unknown').expect(404);
  });

  it('accepts every body it documents, defaults included', async () => {
    f = await simulatorFixture();
    await f
      .http()
      .post('/_sim/faults')
      .send({ duplicateDeliveries: false, outOfOrder: false, messaging: { slowMs: 0 }, integration: { delayMs: 0 }, rateLimitPerMinute: 600 })
      .expect(200);
    await f
      .http()
      .post('/_sim/clinics')
      .send({ timeZone: 'Europe/Berlin', quietHours: { start: '21:00', end: '08:00' }, autoSend: { lab_report: true, prescription: false } })
      .expect(201);
    const apt = await f
      .http()
      .post('/_sim/appointments')
      .send({ clinicId: f.clinicId, mode: 'Online', doctor: { name: 'Dr Who' }, payment: { type: 'Full' } })
      .expect(201);
    await f
      .http()
      .post(`/_sim/appointments/${apt.body.serviceId}/reschedule`)
      .send({ startsAt: '2027-01-10T09:00:00Z', location: { name: 'Room 9' } })
      .expect(200);
    await f.http().post(`/_sim/appointments/${apt.body.serviceId}/complete`).expect(200);
    await f.http().post(`/_sim/subscriptions/${f.sub.id}/resume`).send({}).expect(200);
  });

  it.each<[string, (x: F, ids: { apt: string }) => [string, Record<string, unknown>], string]>([
    ['a clinic', () => ['/_sim/clinics', { timeZone: 'UTC', quietHour: { start: '21:00', end: '08:00' } }], 'quietHour'],
    ["a clinic's quiet hours", () => ['/_sim/clinics', { quietHours: { start: '21:00', stop: '08:00' } }], 'quietHours.stop'],
    ["a clinic's auto-send", () => ['/_sim/clinics', { autoSend: { labReport: true } }], 'autoSend.labReport'],
    ['a key', (x) => ['/_sim/keys', { clinicId: x.clinicId, mode: 'live', scope: 'all' }], 'scope'],
    ['a subscription', (x) => ['/_sim/subscriptions', { clinicId: x.clinicId, url: 'http://127.0.0.1:9/hook', eventType: ['patient.created'] }], 'eventType'],
    ['a resume', (x) => [`/_sim/subscriptions/${x.sub.id}/resume`, { force: true }], 'force'],
    ['a secret rotation', (x) => [`/_sim/subscriptions/${x.sub.id}/rotate-secret`, { secret: 'whsec_mine' }], 'secret'],
    ['a secret retirement', (x) => [`/_sim/subscriptions/${x.sub.id}/retire-secrets`, { keep: 2 }], 'keep'],
    ['a patient', (x) => ['/_sim/patients', { clinicId: x.clinicId, fullName: 'A B' }], 'fullName'],
    ['an appointment', (x) => ['/_sim/appointments', { clinicId: x.clinicId, start: '2027-01-10T09:00:00Z' }], 'start'],
    ["an appointment's doctor", (x) => ['/_sim/appointments', { clinicId: x.clinicId, doctor: { nme: 'Dr X' } }], 'doctor.nme'],
    ["an appointment's payment", (x) => ['/_sim/appointments', { clinicId: x.clinicId, payment: { amount: 5 } }], 'payment.amount'],
    ['a reschedule', (_x, ids) => [`/_sim/appointments/${ids.apt}/reschedule`, { startAt: '2027-01-10T09:00:00Z' }], 'startAt'],
    ["a reschedule's location", (_x, ids) => [`/_sim/appointments/${ids.apt}/reschedule`, { location: { room: '9' } }], 'location.room'],
    ['a cancellation', (_x, ids) => [`/_sim/appointments/${ids.apt}/cancel`, { reason: 'ill' }], 'reason'],
    ['a completion', (_x, ids) => [`/_sim/appointments/${ids.apt}/complete`, { at: 'now' }], 'at'],
    ['a no-show', (_x, ids) => [`/_sim/appointments/${ids.apt}/no-show`, { fee: 10 }], 'fee'],
    ['a payment', (_x, ids) => [`/_sim/appointments/${ids.apt}/payment`, { paid: true }], 'paid'],
    ['a document release', () => ['/_sim/documents/doc_any/release', { now: true }], 'now'],
    ['a clock advance', () => ['/_sim/clock/advance', { secs: 60 }], 'secs'],
    ['faults', () => ['/_sim/faults', { messaging: { failReason: 'x', slow: 10 } }], 'messaging.slow'],
  ])('refuses an unknown key in %s, naming it, and changes nothing', async (_what, call, field) => {
    f = await simulatorFixture();
    const apt = (await f.http().post('/_sim/appointments').send({ clinicId: f.clinicId }).expect(201)).body.serviceId as string;
    const [path, body] = call(f, { apt });
    const before = state(f);
    const res = await f.http().post(path).send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', field });
    expect(res.body.error.message).toContain(field);
    expect(state(f)).toEqual(before);
  });
});
