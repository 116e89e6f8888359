// The processor's queue, on every engine: intake (each inbox row taken in once, a body that is not an event
// parked at once), claims (each entity's oldest open event, under a lease that is never taken while live),
// a batch's outcomes written as data with the next claim, and what a restart frees.
import { afterEach, describe, expect, it } from 'vitest';
import { appointmentEvent } from '../support/processor-fixture.ts';
import { engines, type OpenedEngine } from './processor-engines.ts';

const LEASE = 30_000;

describe.each(engines)('the processing queue on $name', (engine) => {
  let e: OpenedEngine;
  afterEach(async () => {
    await e?.close();
  });
  const open = async () => {
    e = await engine.open();
    return e;
  };
  const rowOf = async (inboxId: number) =>
    (
      await e.query<{ state: string; attempts: number; last_error: string | null; next_attempt_at: number; lease_until: number | null }>(
        'SELECT state, attempts, last_error, next_attempt_at, lease_until FROM processing WHERE inbox_id = ?',
        inboxId,
      )
    )[0];
  /** Stores events, takes them in and claims them: the batch a processor would hold. */
  const claimedBatch = async (...serviceIds: string[]) => {
    for (const s of serviceIds) await e.store(appointmentEvent({ serviceId: s }));
    await e.stores.queue.intake();
    return e.stores.queue.claim(10, LEASE);
  };

  it('takes in each inbox row once, validated, and parks a body that is not an event with its reason', async () => {
    await open();
    const good = await e.store(appointmentEvent({ serviceId: 'apt_1' }));
    const bad = await e.store('not json', 'raw-1');
    const first = await e.stores.queue.intake();
    expect(first.taken).toBe(2);
    expect(first.events).toMatchObject([{ inboxId: good.inboxId, entityKey: 'appointment:apt_1', event: { eventId: good.eventId } }]);
    expect(first.dead).toEqual([{ eventId: 'raw-1', reason: expect.stringMatching(/^malformed_json/) }]);
    expect(await rowOf(good.inboxId)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(await rowOf(bad.inboxId)).toMatchObject({ state: 'dead', last_error: expect.stringMatching(/^malformed_json/) });
    expect((await e.stores.queue.intake()).taken).toBe(0);
  });

  it("claims each entity's oldest open event only, oldest first, counting the attempt", async () => {
    await open();
    const a1 = await e.store(appointmentEvent({ serviceId: 'apt_A', occurredAt: '2026-01-15T09:00:00.000Z' }));
    const b1 = await e.store(appointmentEvent({ serviceId: 'apt_B' }));
    await e.store(appointmentEvent({ serviceId: 'apt_A', occurredAt: '2026-01-15T09:05:00.000Z' }));
    await e.stores.queue.intake();
    const claimed = await e.stores.queue.claim(10, LEASE);
    expect(claimed).toEqual([
      { inboxId: a1.inboxId, eventId: a1.eventId, entityKey: 'appointment:apt_A', attempts: 1, traceContext: null },
      { inboxId: b1.inboxId, eventId: b1.eventId, entityKey: 'appointment:apt_B', attempts: 1, traceContext: null },
    ]);
    expect(await rowOf(a1.inboxId)).toMatchObject({ attempts: 1, lease_until: e.clock.now() + LEASE });
  });

  it('never hands out an event whose lease is live, and hands it out again once the lease ran out', async () => {
    await open();
    const [c] = await claimedBatch('apt_1');
    e.clock.advance(LEASE - 1);
    expect(await e.stores.queue.claim(10, LEASE)).toEqual([]);
    e.clock.advance(1);
    expect(await e.stores.queue.claim(10, LEASE)).toEqual([{ ...c, attempts: 2 }]);
  });

  it("writes a batch's outcomes in one commit and claims the next batch with it", async () => {
    await open();
    const [applied, dead, stale, retry, wait, release] = await claimedBatch('apt_1', 'apt_2', 'apt_3', 'apt_4', 'apt_5', 'apt_6');
    const next = await e.store(appointmentEvent({ serviceId: 'apt_1', occurredAt: '2026-01-15T09:30:00.000Z' }));
    await e.stores.queue.intake();
    const at = e.clock.now() + 5_000;
    const claimed = await e.stores.queue.commit(
      [
        {
          kind: 'applied',
          inboxId: applied!.inboxId,
          versions: [{ entityKey: 'appointment:apt_1', version: { occurredAt: '2026-01-15T09:00:00.000Z', hash: null }, eventId: applied!.eventId }],
          claims: [{ entityType: 'appointment', serviceId: 'apt_1', emrId: 'A1' }],
        },
        { kind: 'dead', inboxId: dead!.inboxId, reason: 'invalid_event: x' },
        { kind: 'discarded_stale', inboxId: stale!.inboxId, reason: 'stale: older' },
        { kind: 'retry', inboxId: retry!.inboxId, at, reason: 'emr_unavailable: down' },
        { kind: 'wait', inboxId: wait!.inboxId, at, reason: 'emr_unauthorized: refused' },
        { kind: 'release', inboxId: release!.inboxId },
      ],
      { limit: 10, leaseMs: LEASE },
    );
    // The entity whose event was applied has its next one handed out at once; the released one is due again.
    expect(claimed.map((c) => c.inboxId)).toEqual([release!.inboxId, next.inboxId]);
    expect(await rowOf(applied!.inboxId)).toMatchObject({ state: 'applied', lease_until: null });
    expect(await rowOf(dead!.inboxId)).toMatchObject({ state: 'dead', last_error: 'invalid_event: x' });
    expect(await rowOf(stale!.inboxId)).toMatchObject({ state: 'discarded_stale' });
    expect(await rowOf(retry!.inboxId)).toMatchObject({ state: 'retrying', attempts: 1, next_attempt_at: at, lease_until: null });
    expect(await rowOf(wait!.inboxId)).toMatchObject({ state: 'retrying', attempts: 0, next_attempt_at: at, lease_until: null });
    expect(await rowOf(release!.inboxId)).toMatchObject({ state: 'pending', attempts: 1 });
    expect(await e.stores.versions.newest('appointment:apt_1')).toEqual({ occurredAt: '2026-01-15T09:00:00.000Z', hash: null });
    expect(await e.query('SELECT entity_type, service_id, external_id, state FROM mapping_outbox')).toEqual([
      { entity_type: 'appointment', service_id: 'apt_1', external_id: 'A1', state: 'pending' },
    ]);
  });

  it('claims nothing with a commit that asks for no next batch', async () => {
    await open();
    const [c] = await claimedBatch('apt_1');
    await e.store(appointmentEvent({ serviceId: 'apt_2' }));
    await e.stores.queue.intake();
    expect(await e.stores.queue.commit([{ kind: 'release', inboxId: c!.inboxId }])).toEqual([]);
    expect((await e.stores.queue.claim(10, LEASE)).length).toBe(2);
  });

  it('gives a stored event parsed, and a reason for one no longer stored', async () => {
    await open();
    const body = appointmentEvent();
    const { inboxId } = await e.store(body);
    const parsed = await e.stores.queue.event(inboxId);
    expect(parsed.ok && parsed.event.eventId).toBe(body.eventId);
    expect(await e.stores.queue.event(inboxId + 1000)).toEqual({ ok: false, reason: expect.stringMatching(/^body_pruned:/) });
  });

  it('frees, at start, the leases only where one process owns the database (SQLite), none on PostgreSQL', async () => {
    await open();
    const [c] = await claimedBatch('apt_1');
    const freed = await e.stores.queue.releaseLeases();
    if (engine.name === 'sqlite') {
      expect(freed).toBe(1);
      expect(await e.stores.queue.claim(10, LEASE)).toEqual([{ ...c, attempts: 2 }]);
    } else {
      expect(freed).toBe(0);
      expect(await e.stores.queue.claim(10, LEASE)).toEqual([]);
    }
  });

  it('reads the backlog: events not taken in and open ones, and since when the oldest waits', async () => {
    await open();
    expect(await e.stores.readings.depth()).toBe(0);
    expect(await e.stores.readings.oldestOpenReceivedAt()).toBeUndefined();
    const t0 = e.clock.now();
    await e.store(appointmentEvent({ serviceId: 'apt_1' }));
    await e.stores.queue.intake();
    e.clock.advance(1_000);
    await e.store(appointmentEvent({ serviceId: 'apt_2' }));
    expect(await e.stores.readings.depth()).toBe(2);
    expect(await e.stores.readings.oldestOpenReceivedAt()).toBe(t0);
    const [first] = await e.stores.queue.claim(1, LEASE);
    await e.stores.queue.commit([{ kind: 'applied', inboxId: first!.inboxId, versions: [], claims: [] }]);
    expect(await e.stores.readings.depth()).toBe(1);
    expect(await e.stores.readings.oldestOpenReceivedAt()).toBe(t0 + 1_000);
  });

  it("leaves out of the oldest open event's age the events queued behind a waiting one of their entity", async () => {
    await open();
    await e.store(appointmentEvent({ serviceId: 'apt_1' }));
    await e.stores.queue.intake();
    const [waiting] = await e.stores.queue.claim(1, LEASE);
    const lacks = [{ entityType: 'doctor' as const, serviceId: 'doc_1' }];
    await e.stores.queue.commit([{ kind: 'waiting', inboxId: waiting!.inboxId, lacks, reason: 'waiting for a mapping: doctor:doc_1' }]);
    await e.store(appointmentEvent({ serviceId: 'apt_1', eventType: 'appointment.cancelled', status: 'Cancelled' }));
    await e.stores.queue.intake();
    e.clock.advance(1_000);

    expect(await e.stores.readings.oldestOpenReceivedAt()).toBeUndefined();
    await e.store(appointmentEvent({ serviceId: 'apt_2' }));
    expect(await e.stores.readings.oldestOpenReceivedAt()).toBe(e.clock.now());
  });
});
