// Webhook delivery: subscribed types only, the seven headers verified with the receiver's own verifier,
// the retry ladder to the second, one appointment in order, pause after 50 failures and resume, rotation.
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TOLERANCE_SECONDS } from '../../src/contract/api.ts';
import { webhookEventSchema } from '../../src/contract/events.ts';
import { verifyWebhook } from '../../src/signature/webhook-signature.ts';
import { simulatorFixture } from '../support/simulator-fixture.ts';
import { startSubscriber } from '../support/subscriber.ts';

type F = Awaited<ReturnType<typeof simulatorFixture>>;
let f: F;
afterEach(async () => f?.close());

const createAppointment = async (x: F) => (await x.http().post('/_sim/appointments').send({ clinicId: x.clinicId })).body as { serviceId: string };
const advance = (x: F, seconds: number) => x.http().post('/_sim/clock/advance').send({ seconds });

describe('webhook delivery', () => {
  it('sends valid snapshots with the seven headers, verifiable by the receiver', async () => {
    f = await simulatorFixture();
    const apt = await createAppointment(f);
    for (const change of ['reschedule', 'payment', 'complete', 'no-show', 'cancel'])
      await f.http().post(`/_sim/appointments/${apt.serviceId}/${change}`).send({});
    await f.http().post('/_sim/patients').send({ clinicId: f.clinicId });
    await f.sim.runDue();
    const types = f.subscriber.received.map((r) => r.json.eventType);
    expect(types).toEqual(
      expect.arrayContaining([
        'appointment.created',
        'appointment.rescheduled',
        'appointment.payment_updated',
        'appointment.completed',
        'appointment.no_show',
        'appointment.cancelled',
        'patient.created',
      ]),
    );
    for (const r of f.subscriber.received) {
      expect(webhookEventSchema.safeParse(r.json).success, String(r.json.eventType)).toBe(true);
      expect(r.headers['x-service-event-id']).toBe(r.json.eventId);
      expect(r.headers['x-service-event-type']).toBe(r.json.eventType);
      expect(r.headers['x-service-delivery-attempt']).toBe('1');
      expect(() =>
        verifyWebhook({
          body: r.body,
          headers: r.headers,
          secrets: [f.sub.signingSecret],
          keyId: f.sub.keyId,
          toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
          nowMs: f.clock.now(),
        }),
      ).not.toThrow();
    }
  });

  it('sends only the subscribed event types', async () => {
    f = await simulatorFixture({ eventTypes: ['appointment.cancelled'] });
    const apt = await createAppointment(f);
    await f.http().post(`/_sim/appointments/${apt.serviceId}/cancel`);
    await f.sim.runDue();
    expect(f.subscriber.received.map((r) => r.json.eventType)).toEqual(['appointment.cancelled']);
  });

  it('retries on the ladder, each attempt on time and freshly signed, then gives up with one alert', async () => {
    f = await simulatorFixture({ eventTypes: ['patient.created'] });
    f.subscriber.setAnswer(() => 500);
    const t0 = f.clock.now();
    await f.http().post('/_sim/patients').send({ clinicId: f.clinicId });
    await f.sim.runDue();
    // One second before each rung nothing happens; at the rung the next attempt goes.
    const ladder = [30, 120, 600, 3600, 21600, 43200, 86400];
    let elapsed = 0;
    for (const [i, rung] of ladder.entries()) {
      await advance(f, rung - 1);
      expect(f.subscriber.received).toHaveLength(i + 1);
      await advance(f, 1);
      elapsed += rung;
      expect(f.subscriber.received).toHaveLength(i + 2);
      const last = f.subscriber.received[i + 1]!;
      expect(last.headers['x-service-delivery-attempt']).toBe(String(i + 2));
      expect(Number(last.headers['x-service-timestamp'])).toBe(Math.floor((t0 + elapsed * 1000) / 1000));
    }
    await advance(f, 7 * 86400);
    expect(f.subscriber.received).toHaveLength(8);
    const alerts = (await f.http().get('/_sim/alerts')).body as { kind: string }[];
    expect(alerts.filter((a) => a.kind === 'delivery_given_up')).toHaveLength(1);
  });

  it("keeps one appointment's deliveries in order while another's go ahead", async () => {
    f = await simulatorFixture();
    const a = await createAppointment(f);
    const b = await createAppointment(f);
    f.subscriber.setAnswer((r) =>
      (r.json.appointment as { serviceId?: string } | undefined)?.serviceId === a.serviceId && r.json.eventType === 'appointment.created' ? 500 : 200,
    );
    await f.http().post(`/_sim/appointments/${a.serviceId}/cancel`);
    await f.http().post(`/_sim/appointments/${b.serviceId}/cancel`);
    await f.sim.runDue();
    const forA = () =>
      f.subscriber.received.filter((r) => (r.json.appointment as { serviceId: string } | undefined)?.serviceId === a.serviceId).map((r) => r.json.eventType);
    const forB = f.subscriber.received
      .filter((r) => (r.json.appointment as { serviceId: string } | undefined)?.serviceId === b.serviceId)
      .map((r) => r.json.eventType);
    expect(forA()).toEqual(['appointment.created']);
    expect(forB).toEqual(['appointment.created', 'appointment.cancelled']);
    f.subscriber.setAnswer(() => 200);
    await advance(f, 30);
    expect(forA()).toEqual(['appointment.created', 'appointment.created', 'appointment.cancelled']);
  });

  it("retries an appointment's first event on each rung of one long jump while its next event waits behind it", async () => {
    f = await simulatorFixture({ eventTypes: ['appointment.created', 'appointment.cancelled'] });
    let failures = 3;
    f.subscriber.setAnswer(() => (failures-- > 0 ? 500 : 200));
    const t0s = Math.floor(f.clock.now() / 1000);
    const a = await createAppointment(f);
    await f.http().post(`/_sim/appointments/${a.serviceId}/cancel`);
    await f.sim.runDue();
    await advance(f, 3600);
    expect(f.subscriber.received.map((r) => `${String(r.json.eventType)} at +${Number(r.headers['x-service-timestamp']) - t0s} s`)).toEqual([
      'appointment.created at +0 s',
      'appointment.created at +30 s',
      'appointment.created at +150 s',
      'appointment.created at +750 s',
      'appointment.cancelled at +750 s',
    ]);
  });

  it('pauses after 50 consecutive failed attempts, keeps queueing, and drains in order on resume', async () => {
    f = await simulatorFixture({ eventTypes: ['patient.created'] });
    f.subscriber.setAnswer(() => 503);
    for (let i = 0; i < 50; i++) await f.http().post('/_sim/patients').send({ clinicId: f.clinicId });
    await f.sim.runDue();
    let state = (await f.http().get(`/_sim/subscriptions/${f.sub.id}`)).body;
    expect(state).toMatchObject({ paused: true, consecutiveFailures: 50, queued: 50 });
    await f.http().post('/_sim/patients').send({ clinicId: f.clinicId });
    await advance(f, 3600);
    expect(f.subscriber.received).toHaveLength(50);
    f.subscriber.setAnswer(() => 200);
    state = (await f.http().post(`/_sim/subscriptions/${f.sub.id}/resume`)).body;
    await advance(f, 86400);
    state = (await f.http().get(`/_sim/subscriptions/${f.sub.id}`)).body;
    expect(state).toMatchObject({ paused: false, queued: 0 });
    // Every one of the 51 events arrived; the 50 that failed first came again after the resume.
    expect(new Set(f.subscriber.received.map((r) => r.json.eventId)).size).toBe(51);
    expect(f.subscriber.received.filter((r) => r.headers['x-service-delivery-attempt'] === '2')).toHaveLength(50);
    const alerts = (await f.http().get('/_sim/alerts')).body as { kind: string }[];
    expect(alerts.filter((a) => a.kind === 'subscription_paused')).toHaveLength(1);
  });

  it("keeps another subscription's ladder on time while one subscription is paused", async () => {
    f = await simulatorFixture({ eventTypes: ['patient.created'] });
    f.subscriber.setAnswer(() => 503);
    const other = await startSubscriber();
    try {
      await f
        .http()
        .post('/_sim/subscriptions')
        .send({ clinicId: f.clinicId, url: other.url, eventTypes: ['patient.created'] });
      for (let i = 0; i < 50; i++) await f.http().post('/_sim/patients').send({ clinicId: f.clinicId });
      await f.sim.runDue();
      expect((await f.http().get(`/_sim/subscriptions/${f.sub.id}`)).body).toMatchObject({ paused: true, queued: 50 });
      other.setAnswer(() => 500);
      const t0 = f.clock.now();
      await f.http().post('/_sim/patients').send({ clinicId: f.clinicId });
      await f.sim.runDue();
      // One jump over three rungs: the paused queue is still waiting, and each of the others' attempts goes on time.
      await advance(f, 30 + 120 + 600);
      const attempts = other.received.slice(50);
      expect(attempts.map((r) => r.headers['x-service-delivery-attempt'])).toEqual(['1', '2', '3', '4']);
      expect(attempts.map((r) => Number(r.headers['x-service-timestamp']) - Math.floor(t0 / 1000))).toEqual([0, 30, 150, 750]);
      expect(f.subscriber.received).toHaveLength(50);
    } finally {
      await other.close();
    }
  });

  it('signs with every active secret during a rotation', async () => {
    f = await simulatorFixture({ eventTypes: ['patient.created'] });
    const rotated = (await f.http().post(`/_sim/subscriptions/${f.sub.id}/rotate-secret`)).body as { signingSecret: string };
    await f.http().post('/_sim/patients').send({ clinicId: f.clinicId });
    await f.sim.runDue();
    const r = f.subscriber.received[0]!;
    expect(String(r.headers['x-service-signature']).split(' ')).toHaveLength(2);
    for (const secret of [f.sub.signingSecret, rotated.signingSecret])
      expect(() =>
        verifyWebhook({
          body: r.body,
          headers: r.headers,
          secrets: [secret],
          keyId: f.sub.keyId,
          toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
          nowMs: f.clock.now(),
        }),
      ).not.toThrow();
    await f.http().post(`/_sim/subscriptions/${f.sub.id}/retire-secrets`);
    await f.http().post('/_sim/patients').send({ clinicId: f.clinicId });
    await f.sim.runDue();
    expect(() =>
      verifyWebhook({
        body: f.subscriber.received[1]!.body,
        headers: f.subscriber.received[1]!.headers,
        secrets: [f.sub.signingSecret],
        keyId: f.sub.keyId,
        toleranceSeconds: DEFAULT_TOLERANCE_SECONDS,
        nowMs: f.clock.now(),
      }),
    ).toThrow();
  });

  it('duplicate-delivery fault sends every event twice', async () => {
    f = await simulatorFixture({ eventTypes: ['patient.created'] });
    await f.http().post('/_sim/faults').send({ duplicateDeliveries: true });
    await f.http().post('/_sim/patients').send({ clinicId: f.clinicId });
    await f.sim.runDue();
    expect(f.subscriber.received).toHaveLength(2);
    expect(f.subscriber.received[0]!.json.eventId).toBe(f.subscriber.received[1]!.json.eventId);
  });
});
