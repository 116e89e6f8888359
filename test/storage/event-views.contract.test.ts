// What the console and the admin API read of events, on every engine: the search by eventId, type, the entity's
// serviceId, state and received time, newest first a page at a time; one event with its headers, whether its
// body is still stored, and the body itself; the per-minute counts of received (what the inbox stored, taken in
// or not) and applied events, read by indexes; and the dead letters' count.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { type EventSearch, perMinuteSql, searchSql } from '../../src/storage/event-views.ts';
import { appointmentEvent } from '../support/processor-fixture.ts';
import { engines, type OpenedEngine } from './processor-engines.ts';

const LEASE = 30_000;
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

const patientEvent = (serviceId: string) => ({
  eventId: randomUUID(),
  eventType: 'patient.created',
  occurredAt: '2026-01-15T09:00:00.000Z',
  clinicId: 'clinic_1',
  patient: { serviceId, externalId: null, name: 'Synthetic Patient', phone: '+15550001111' },
});

describe.each(engines)('event views on $name', (engine) => {
  let e: OpenedEngine;
  afterEach(async () => {
    await e?.close();
  });
  const ids = async (q: Partial<EventSearch>) => (await e.stores.events.search({ limit: 50, ...q })).map((r) => r.eventId);
  /** Takes in what is stored and gives every claimed event `kind`. */
  const finishAll = async (kind: 'applied' | 'dead') => {
    await e.stores.queue.intake();
    const claimed = await e.stores.queue.claim(100, LEASE);
    await e.stores.queue.commit(
      claimed.map((c) =>
        kind === 'dead' ? { kind, inboxId: c.inboxId, reason: 'emr_unavailable: down' } : { kind, inboxId: c.inboxId, versions: [], claims: [] },
      ),
    );
  };

  it('finds events by eventId, type, serviceId, state and received time, newest first, a page at a time', async () => {
    e = await engine.open();
    const t0 = e.clock.now();
    const a1 = await e.store(appointmentEvent({ serviceId: 'apt_1' }));
    e.clock.advance(MINUTE);
    const p1 = await e.store(patientEvent('pat_1'));
    e.clock.advance(MINUTE);
    const a2 = await e.store(appointmentEvent({ serviceId: 'apt_2', eventType: 'appointment.cancelled' }));
    await finishAll('applied');
    const late = await e.store(appointmentEvent({ serviceId: 'apt_1', occurredAt: '2026-01-15T10:00:00.000Z' }));

    expect(await ids({})).toEqual([late.eventId, a2.eventId, p1.eventId, a1.eventId]);
    expect(await ids({ eventId: p1.eventId })).toEqual([p1.eventId]);
    expect(await ids({ eventType: 'appointment.cancelled' })).toEqual([a2.eventId]);
    expect(await ids({ serviceId: 'apt_1' })).toEqual([a1.eventId]);
    expect(await ids({ serviceId: 'pat_1' })).toEqual([p1.eventId]);
    expect(await ids({ state: 'received' })).toEqual([late.eventId]);
    expect(await ids({ state: 'applied', since: t0 + MINUTE })).toEqual([a2.eventId, p1.eventId]);
    expect(await ids({ until: t0 + MINUTE })).toEqual([a1.eventId]);
    expect(await ids({ state: 'dead' })).toEqual([]);

    const first = await e.stores.events.search({ limit: 2 });
    expect(first.map((r) => r.eventId)).toEqual([late.eventId, a2.eventId]);
    expect(await ids({ before: first[1]!.inboxId })).toEqual([p1.eventId, a1.eventId]);
    expect(first[1]).toMatchObject({
      eventType: 'appointment.cancelled',
      entityKey: 'appointment:apt_2',
      state: 'applied',
      attempts: 1,
      receivedAt: t0 + 2 * MINUTE,
    });
    expect(first[0]).toMatchObject({ state: 'received', entityKey: null, attempts: 0, finishedAt: null });
  });

  it('refuses a state it does not know rather than write it into its SQL', async () => {
    e = await engine.open();
    await expect(e.stores.events.search({ limit: 5, state: "dead' OR 1=1 --" as 'dead' })).rejects.toThrow(/not an event state/);
  });

  it('shows one event with its headers and whether its body is stored, and hands the body over', async () => {
    e = await engine.open();
    const body = appointmentEvent({ serviceId: 'apt_1' });
    const { eventId } = await e.store(body);
    // Not taken in yet: received is all it went through.
    const received = [{ at: e.clock.now(), state: 'received', attempt: 0, reason: null }];
    expect(await e.stores.events.get(eventId)).toMatchObject({ eventId, headers: {}, bodyStored: true, emrRefs: [], history: received, state: 'received' });
    expect(JSON.parse((await e.stores.events.body(eventId))!.toString('utf8'))).toEqual(body);
    expect(await e.stores.events.get('nope')).toBeUndefined();
    expect(await e.stores.events.body('nope')).toBeUndefined();

    await finishAll('applied');
    await e.store(appointmentEvent({ serviceId: 'apt_2' }));
    e.clock.advance(DAY);
    await e.stores.retention.pruneEvents({ bodiesBefore: e.clock.now(), eventsBefore: 0 });
    expect(await e.stores.events.get(eventId)).toMatchObject({ bodyStored: false, state: 'applied' });
    expect(await e.stores.events.body(eventId)).toBeNull();
  });

  it('counts events received and applied per minute in a range, minutes with nothing left out', async () => {
    e = await engine.open();
    const start = Math.floor(e.clock.now() / MINUTE) * MINUTE;
    e.clock.set(start + 10_000);
    await e.store(appointmentEvent({ serviceId: 'apt_1' }));
    await e.store(appointmentEvent({ serviceId: 'apt_2' }));
    e.clock.set(start + 2 * MINUTE + 5_000);
    await finishAll('applied');
    await e.store(appointmentEvent({ serviceId: 'apt_3' }));
    await finishAll('dead');
    expect(await e.stores.events.perMinute(start, start + 3 * MINUTE)).toEqual([
      { minute: start, received: 2, applied: 0 },
      { minute: start + 2 * MINUTE, received: 1, applied: 2 },
    ]);
    expect(await e.stores.events.perMinute(start + MINUTE, start + 2 * MINUTE)).toEqual([]);
    expect(await e.stores.events.deadCount()).toBe(1);
  });

  it('counts as received every event the inbox stored, taken in or not, by its received time; retention keeps the counts as long as the ids', async () => {
    e = await engine.open();
    const start = Math.floor(e.clock.now() / MINUTE) * MINUTE;
    e.clock.set(start + 59_000);
    for (let i = 0; i < 3; i++) await e.store(appointmentEvent({ serviceId: `apt_${i}` }));
    e.clock.set(start + MINUTE);
    const again = await e.store(appointmentEvent({ serviceId: 'apt_9' }));
    // A duplicate eventId is acknowledged but not stored again: not counted twice.
    await e.stores.queue.intake();
    await e.store(appointmentEvent({ serviceId: 'apt_9' }), again.eventId);
    // Nothing taken in but the first four, and none of them applied: all received.
    expect(await e.stores.events.perMinute(start, start + 2 * MINUTE)).toEqual([
      { minute: start, received: 3, applied: 0 },
      { minute: start + MINUTE, received: 1, applied: 0 },
    ]);
    e.clock.set(start + 2 * MINUTE);
    await e.store(appointmentEvent({ serviceId: 'apt_10' }));
    expect(await e.stores.events.perMinute(start, start + 3 * MINUTE)).toContainEqual({ minute: start + 2 * MINUTE, received: 1, applied: 0 });
    await e.stores.retention.pruneEvents({ bodiesBefore: 0, eventsBefore: start + MINUTE });
    expect((await e.stores.events.perMinute(start, start + 3 * MINUTE)).map((m) => m.minute)).toEqual([start + MINUTE, start + 2 * MINUTE]);
  });

  it('reads the per-minute counts by their indexes, and dead letters (events and mappings) by theirs', async () => {
    e = await engine.open();
    const perMinute = await e.explain(perMinuteSql('0', '86400000'));
    // SQLite: the counts' integer primary key; PostgreSQL: their (minute, backend) key.
    expect(perMinute).toMatch(e.name === 'sqlite' ? /inbox_minutes USING INTEGER PRIMARY KEY/ : /inbox_minutes_pkey/);
    expect(perMinute).toMatch(/processing_finished/);
    expect(perMinute).not.toMatch(/inbox_events/);
    expect(await e.explain("SELECT count(*) FROM mapping_outbox WHERE state = 'dead'")).toMatch(/mapping_outbox_dead/);
    const dead = await e.explain(`${searchSql({ state: 'dead', limit: 5 }, () => '?').sql} LIMIT 5`);
    expect(dead).toMatch(/processing_dead/);
  });

  it('finds the events of a serviceId, finished ones included, by the entity index, not by reading every event', async () => {
    e = await engine.open();
    const bySubject = await e.explain(`${searchSql({ serviceId: 'apt_1', limit: 5 }, () => "'appointment:apt_1'").sql} LIMIT 5`);
    expect(bySubject).toMatch(/processing_entity/);
  });
});
