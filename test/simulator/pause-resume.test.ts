// The pause and the resume of a subscription: exactly 50 consecutive failed attempts pause it, however large
// the backlog; a resume answers at once and drains the queue in the background, oldest first, events that
// failed before the pause included, one appointment's events still in their order.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { PAUSE_AFTER_CONSECUTIVE_FAILURES } from '../../src/contract/api.ts';
import { patientCreatedEvent } from '../../src/simulator/events.ts';
import { simulatorFixture } from '../support/simulator-fixture.ts';
import type { Received } from '../support/subscriber.ts';

type F = Awaited<ReturnType<typeof simulatorFixture>>;
let f: F;
afterEach(async () => f?.close());

/** Queues `n` patient.created events straight into the dispatcher (a backlog without n control calls). */
function queuePatients(x: F, n: number): string[] {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const event = patientCreatedEvent(
      { id: `pat_${randomUUID()}`, clinicId: x.clinicId, externalId: null, name: 'Backlog Patient', phone: '+15550000000' },
      x.clock.now(),
    );
    x.sim.emit(event);
    ids.push(event.eventId);
  }
  return ids;
}

const deliveries = async (x: F) => (await x.http().get(`/_sim/deliveries?subscriptionId=${x.sub.id}`)).body as { statusCode: number | null }[];
const subscription = async (x: F) =>
  (await x.http().get(`/_sim/subscriptions/${x.sub.id}`)).body as { paused: boolean; consecutiveFailures: number; queued: number };
const resume = (x: F) => x.http().post(`/_sim/subscriptions/${x.sub.id}/resume`).send({}).expect(200);

/** What a delivery was about: its type and the entity it names (an appointment's events share the entity). */
const label = (r: Received) => {
  const entity = (r.json.appointment ?? r.json.patient) as { serviceId: string };
  return `${String(r.json.eventType)} ${entity.serviceId}`;
};

describe('the pause', () => {
  it('stops at exactly 50 failed attempts with a backlog larger than one batch, and again after a resume', async () => {
    f = await simulatorFixture({ eventTypes: ['patient.created'] });
    f.subscriber.setAnswer(() => 500);
    queuePatients(f, 300);
    await f.sim.runDue();
    expect(await deliveries(f)).toHaveLength(PAUSE_AFTER_CONSECUTIVE_FAILURES);
    expect(await subscription(f)).toMatchObject({ paused: true, consecutiveFailures: 50, queued: 300 });
    // However far the clock goes, a paused subscription gets nothing.
    await f
      .http()
      .post('/_sim/clock/advance')
      .send({ seconds: 3 * 86_400 });
    expect(f.subscriber.received).toHaveLength(50);

    // Still failing after the resume: fifty more, and paused again.
    await resume(f);
    await f.sim.runDue();
    expect(await deliveries(f)).toHaveLength(100);
    expect(await subscription(f)).toMatchObject({ paused: true, consecutiveFailures: 50 });
    const alerts = (await f.http().get('/_sim/alerts')).body as { kind: string; message: string }[];
    expect(alerts.filter((a) => a.kind === 'subscription_paused').map((a) => a.message)).toEqual([
      'paused after 50 consecutive failed attempts',
      'paused after 50 consecutive failed attempts',
    ]);
  });
});

describe('the resume', () => {
  it('answers at once with a large backlog, which drains in the background', async () => {
    f = await simulatorFixture({ eventTypes: ['patient.created'] });
    f.subscriber.setAnswer(() => 500);
    const ids = queuePatients(f, 2_000);
    await f.sim.runDue();
    expect(f.subscriber.received).toHaveLength(50);
    f.subscriber.setAnswer(() => 200);

    const started = performance.now();
    const answer = await resume(f);
    const took = performance.now() - started;
    // The answer tells the state when the resume was taken: nothing of the backlog has gone yet.
    expect(answer.body).toMatchObject({ paused: false, consecutiveFailures: 0 });
    expect(answer.body.queued).toBeGreaterThan(1_900);
    expect(f.subscriber.received.length - 50).toBeLessThan(1_900);
    expect(took).toBeLessThan(2_000);

    // The drain is a pass of its own: the next one starts after it.
    await f.sim.runDue();
    expect(await subscription(f)).toMatchObject({ paused: false, queued: 0 });
    expect(f.subscriber.received.slice(50).map((r) => r.json.eventId)).toEqual(ids);
  });

  it('drains oldest first, the events that failed before the pause included', async () => {
    f = await simulatorFixture();
    f.subscriber.setAnswer(() => 503);
    const expected: string[] = [];
    const book = async () => {
      const apt = (await f.http().post('/_sim/appointments').send({ clinicId: f.clinicId }).expect(201)).body;
      expected.push(`patient.created ${apt.patient.serviceId}`, `appointment.created ${apt.serviceId}`);
      return apt.serviceId as string;
    };
    const patient = async () => {
      const p = (await f.http().post('/_sim/patients').send({ clinicId: f.clinicId }).expect(201)).body;
      expected.push(`patient.created ${p.serviceId}`);
    };
    const change = async (apt: string, action: 'cancel' | 'complete', eventType: string) => {
      await f.http().post(`/_sim/appointments/${apt}/${action}`).expect(200);
      expected.push(`${eventType} ${apt}`);
    };
    // Fifty events fail and pause the subscription; their retries fall due 30 s later.
    const a = await book();
    const b = await book();
    for (let i = 0; i < 46; i++) await patient();
    await f.sim.runDue();
    expect(await subscription(f)).toMatchObject({ paused: true, queued: 50 });
    // More arrive while it is paused, some of them behind a failed event of their appointment.
    await f.http().post('/_sim/clock/advance').send({ seconds: 10 });
    await change(a, 'complete', 'appointment.completed');
    await patient();
    await change(b, 'cancel', 'appointment.cancelled');
    await book();

    f.subscriber.setAnswer(() => 200);
    const before = f.subscriber.received.length;
    await resume(f);
    await f.sim.runDue();
    expect(f.subscriber.received.slice(before).map(label)).toEqual(expected);
    expect(await subscription(f)).toMatchObject({ paused: false, queued: 0 });
  });

  it("keeps one appointment's events in order when one of them fails again during the drain", async () => {
    f = await simulatorFixture();
    f.subscriber.setAnswer(() => 503);
    const apt = (await f.http().post('/_sim/appointments').send({ clinicId: f.clinicId }).expect(201)).body.serviceId as string;
    for (let i = 0; i < 48; i++) await f.http().post('/_sim/patients').send({ clinicId: f.clinicId }).expect(201);
    await f.sim.runDue();
    expect(await subscription(f)).toMatchObject({ paused: true });
    await f.http().post(`/_sim/appointments/${apt}/cancel`).expect(200);
    await f.http().post('/_sim/patients').send({ clinicId: f.clinicId }).expect(201);

    // After the resume the appointment's creation fails once more: its cancellation waits behind it, the rest go on.
    let failCreationOnce = true;
    f.subscriber.setAnswer((r) => {
      if (r.json.eventType !== 'appointment.created' || !failCreationOnce) return 200;
      failCreationOnce = false;
      return 503;
    });
    const before = f.subscriber.received.length;
    await resume(f);
    await f.sim.runDue();
    const forApt = () => f.subscriber.received.slice(before).filter((r) => (r.json.appointment as { serviceId?: string } | undefined)?.serviceId === apt);
    expect(forApt().map((r) => r.json.eventType)).toEqual(['appointment.created']);
    expect(f.subscriber.received.slice(before)).toHaveLength(51);
    expect(await subscription(f)).toMatchObject({ paused: false, queued: 2 });

    // Its second attempt failed, so the third is on the ladder's second rung.
    await f.http().post('/_sim/clock/advance').send({ seconds: 120 });
    expect(forApt().map((r) => `${String(r.json.eventType)} attempt ${String(r.headers['x-service-delivery-attempt'])}`)).toEqual([
      'appointment.created attempt 2',
      'appointment.created attempt 3',
      'appointment.cancelled attempt 1',
    ]);
    expect(await subscription(f)).toMatchObject({ queued: 0 });
  });
});
