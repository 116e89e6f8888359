// Dead letters and retention, on every engine: parked events and mappings read a page at a time, reopened
// with fresh attempts or dismissed for good; finished events lose their body, then their row, while dead,
// dismissed and open ones stay; sent mappings go after the cutoff, the others stay.
import { afterEach, describe, expect, it } from 'vitest';
import { appointmentEvent } from '../support/processor-fixture.ts';
import { engines, type OpenedEngine } from './processor-engines.ts';

describe.each(engines)('dead letters and retention on $name', (engine) => {
  let e: OpenedEngine;
  afterEach(async () => {
    await e?.close();
  });

  /** Events stored, taken in, claimed and given the outcome `kind`. */
  const finished = async (kind: 'applied' | 'dead', ...serviceIds: string[]) => {
    const stored = [];
    for (const s of serviceIds) stored.push(await e.store(appointmentEvent({ serviceId: s })));
    await e.stores.queue.intake();
    const claimed = await e.stores.queue.claim(100, 60_000);
    await e.stores.queue.commit(
      claimed.map((c) =>
        kind === 'dead' ? { kind, inboxId: c.inboxId, reason: 'emr_unavailable: down' } : { kind, inboxId: c.inboxId, versions: [], claims: [] },
      ),
    );
    return stored;
  };
  const stateOf = async (eventId: string) => (await e.stores.deadLetters.events.get(eventId))?.state;

  it('pages parked events in arrival order, filtered by type, and shows any event by id', async () => {
    e = await engine.open();
    const [a, b, c] = await finished('dead', 'apt_1', 'apt_2', 'apt_3');
    const page = await e.stores.deadLetters.events.page({ state: 'dead', afterInboxId: 0, limit: 2 });
    expect(page.map((r) => r.status.eventId)).toEqual([a!.eventId, b!.eventId]);
    expect(page[0]!.status).toMatchObject({ state: 'dead', attempts: 1, lastError: 'emr_unavailable: down', eventType: 'appointment.created' });
    const rest = await e.stores.deadLetters.events.page({ state: 'dead', afterInboxId: page[1]!.inboxId, limit: 2 });
    expect(rest.map((r) => r.status.eventId)).toEqual([c!.eventId]);
    expect(await e.stores.deadLetters.events.page({ state: 'dead', afterInboxId: 0, limit: 9, type: 'patient.created' })).toEqual([]);
    const received = await e.store(appointmentEvent({ serviceId: 'apt_new' }));
    expect(await e.stores.deadLetters.events.get(received.eventId)).toMatchObject({ state: 'received', attempts: 0 });
    expect(await e.stores.deadLetters.events.get('nope')).toBeUndefined();
  });

  it('reopens a dead letter with fresh attempts, one or all, and never one that is not dead', async () => {
    e = await engine.open();
    const [a, b] = await finished('dead', 'apt_1', 'apt_2');
    const [ok] = await finished('applied', 'apt_3');
    expect(await e.stores.deadLetters.events.reopen(a!.eventId)).toBe(true);
    expect(await e.stores.deadLetters.events.reopen(a!.eventId)).toBe(false);
    expect(await e.stores.deadLetters.events.reopen(ok!.eventId)).toBe(false);
    expect(await e.stores.deadLetters.events.reopenAll('patient.updated')).toBe(0);
    expect(await e.stores.deadLetters.events.reopenAll(undefined)).toBe(1);
    expect([await stateOf(a!.eventId), await stateOf(b!.eventId)]).toEqual(['pending', 'pending']);
    expect((await e.stores.queue.claim(10, 60_000)).map((c) => c.attempts)).toEqual([1, 1]);
  });

  it('dismisses a dead letter with who, why and when, once', async () => {
    e = await engine.open();
    const [a] = await finished('dead', 'apt_1');
    expect(await e.stores.deadLetters.events.dismiss(a!.eventId, 'test data', 'admin')).toBe(true);
    expect(await e.stores.deadLetters.events.dismiss(a!.eventId, 'again', 'admin')).toBe(false);
    expect(await e.stores.deadLetters.events.get(a!.eventId)).toMatchObject({
      state: 'dismissed',
      dismissal: { reason: 'test data', by: 'admin', at: new Date(e.clock.now()).toISOString() },
    });
    expect(await e.stores.deadLetters.events.page({ state: 'dead', afterInboxId: 0, limit: 9 })).toEqual([]);
    expect((await e.stores.deadLetters.events.page({ state: 'dismissed', afterInboxId: 0, limit: 9 })).length).toBe(1);
  });

  it("drops a dismissed dead letter's body once the dismissal is past the cutoff, and keeps its row", async () => {
    e = await engine.open();
    const [dismissed, dead] = await finished('dead', 'apt_1', 'apt_2');
    await e.stores.deadLetters.events.dismiss(dismissed!.eventId, 'test data', 'admin');
    const body = async (eventId: string) =>
      Boolean((await e.query<{ has: number | boolean }>('SELECT body IS NOT NULL AS has FROM inbox_events WHERE event_id = ?', eventId))[0]?.has);
    expect(await e.stores.retention.pruneEvents({ bodiesBefore: e.clock.now(), eventsBefore: 0 })).toEqual({ bodies: 0, events: 0 });
    expect(await e.stores.retention.pruneEvents({ bodiesBefore: e.clock.now() + 1, eventsBefore: e.clock.now() + 1 })).toEqual({ bodies: 1, events: 0 });
    expect(await body(dismissed!.eventId)).toBe(false);
    expect(await body(dead!.eventId)).toBe(true);
    expect(await stateOf(dismissed!.eventId)).toBe('dismissed');
  });

  it('pages parked mappings by entity, reopens them all and dismisses one', async () => {
    e = await engine.open();
    const { inboxId } = await e.store({ eventId: 'ev-m', eventType: 'appointment.created' });
    const claims = ['loc_1', 'doc_1', 'doc_2'].map(
      (serviceId) => ({ entityType: serviceId.startsWith('loc') ? 'location' : 'doctor', serviceId, emrId: `E-${serviceId}` }) as const,
    );
    await e.stores.queue.commit([{ kind: 'applied', inboxId, versions: [], claims }]);
    for (const m of await e.stores.mappingOutbox.claimDue(10, 60_000)) await e.stores.mappingOutbox.markDead(m, 'mapping_conflict: no');
    const first = await e.stores.deadLetters.mappings.page({ state: 'dead', after: null, limit: 2 });
    expect(first.map((m) => `${m.entityType}:${m.serviceId}`)).toEqual(['doctor:doc_1', 'doctor:doc_2']);
    const next = await e.stores.deadLetters.mappings.page({ state: 'dead', after: ['doctor', 'doc_2'], limit: 2 });
    expect(next.map((m) => m.serviceId)).toEqual(['loc_1']);
    expect(await e.stores.deadLetters.mappings.dismiss('doctor', 'doc_1', 'mapped by hand', 'admin')).toBe(true);
    expect(await e.stores.deadLetters.mappings.get('doctor', 'doc_1')).toMatchObject({ dismissal: { reason: 'mapped by hand', by: 'admin' } });
    expect(await e.stores.deadLetters.mappings.reopenAll()).toBe(2);
    expect(await e.stores.mappingOutbox.pending()).toBe(2);
  });

  it('prunes the bodies, then the rows, of finished events only, and sent mappings past the cutoff', async () => {
    e = await engine.open();
    const [applied] = await finished('applied', 'apt_1');
    const [dead] = await finished('dead', 'apt_2');
    const open = await e.store(appointmentEvent({ serviceId: 'apt_3' }));
    await e.stores.queue.intake();
    const cutoff = e.clock.now() + 1;
    const body = async (eventId: string) =>
      (await e.query<{ has: number | boolean }>('SELECT body IS NOT NULL AS has FROM inbox_events WHERE event_id = ?', eventId))[0]?.has;

    expect(await e.stores.retention.pruneEvents({ bodiesBefore: cutoff, eventsBefore: 0 })).toEqual({ bodies: 1, events: 0 });
    expect(Boolean(await body(applied!.eventId))).toBe(false);
    expect(Boolean(await body(dead!.eventId))).toBe(true);
    expect((await e.stores.retention.pruneEvents({ bodiesBefore: cutoff, eventsBefore: cutoff })).events).toBe(1);
    expect(await e.stores.deadLetters.events.get(applied!.eventId)).toBeUndefined();
    expect(await stateOf(dead!.eventId)).toBe('dead');
    expect(await stateOf(open.eventId)).toBe('pending');

    const { inboxId } = await e.store({ eventId: 'ev-m', eventType: 'appointment.created' });
    await e.stores.queue.commit([{ kind: 'applied', inboxId, versions: [], claims: [{ entityType: 'doctor', serviceId: 'doc_1', emrId: 'D1' }] }]);
    await e.stores.mappingOutbox.markSent(await e.stores.mappingOutbox.claimDue(10, 60_000));
    expect(await e.stores.retention.pruneSentMappings(e.clock.now())).toBe(0);
    expect(await e.stores.retention.pruneSentMappings(e.clock.now() + 1)).toBe(1);
  });
});
