// Two replicas' processor stores on one PostgreSQL database: the queue hands each event to one of them at a
// time, keeps an entity's later events back while its first is leased (by either), takes over a lease that
// ran out but never a live one, takes each inbox row in exactly once when both take in at once, and lets one
// mapping record stand.
import { afterEach, describe, expect, it } from 'vitest';
import type { ProcessorStores } from '../../src/storage/processor-stores.ts';
import { appointmentEvent } from '../support/processor-fixture.ts';
import { type OpenedEngine, postgresOnly } from './processor-engines.ts';

const LEASE = 30_000;

describe.each(postgresOnly)('two replicas on $name', (engine) => {
  let e: OpenedEngine;
  let other: ProcessorStores;
  afterEach(async () => {
    await e?.close();
  });
  const open = async () => {
    e = await engine.open();
    other = await e.replica!();
  };
  const storeMany = async (n: number, perEntity = 1) => {
    for (let i = 0; i < n; i++)
      for (let k = 0; k < perEntity; k++) await e.store(appointmentEvent({ serviceId: `apt_${i}`, occurredAt: `2026-01-15T09:0${k}:00.000Z` }));
  };

  it('never hands the same event to both, however they race', async () => {
    await open();
    await storeMany(60);
    await e.stores.queue.intake();
    const rounds = await Promise.all([0, 1, 2, 3].map((i) => (i % 2 ? other : e.stores).queue.claim(20, LEASE)));
    const ids = rounds.flat().map((c) => c.inboxId);
    expect(ids.length).toBe(60);
    expect(new Set(ids).size).toBe(60);
  });

  it("keeps an entity's second event back while the first is leased by the other replica, and hands it out once the first is applied", async () => {
    await open();
    await storeMany(1, 2);
    await e.stores.queue.intake();
    const [first] = await e.stores.queue.claim(10, LEASE);
    expect(await other.queue.claim(10, LEASE)).toEqual([]);
    await e.stores.queue.commit([{ kind: 'applied', inboxId: first!.inboxId, versions: [], claims: [] }]);
    expect((await other.queue.claim(10, LEASE)).map((c) => c.inboxId)).toEqual([first!.inboxId + 1]);
  });

  it('takes over a lease that ran out (its replica died) and never a live one', async () => {
    await open();
    await storeMany(1);
    await e.stores.queue.intake();
    const [held] = await e.stores.queue.claim(10, LEASE);
    // The survivor starts: it frees nothing, and waits for the lease to run out.
    expect(await other.queue.releaseLeases()).toBe(0);
    e.clock.advance(LEASE - 1);
    expect(await other.queue.claim(10, LEASE)).toEqual([]);
    e.clock.advance(1);
    expect(await other.queue.claim(10, LEASE)).toEqual([{ ...held, attempts: 2 }]);
  });

  it('takes each inbox row in exactly once when both take in at once, and every row in the end', async () => {
    await open();
    await storeMany(300);
    const both = await Promise.all([e.stores.queue.intake(50), other.queue.intake(50), e.stores.queue.intake(50), other.queue.intake(50)]);
    let ids = both.flatMap((i) => i.events.map((t) => t.inboxId));
    expect(new Set(ids).size).toBe(ids.length);
    while (ids.length < 300) {
      const more = await Promise.all([e.stores.queue.intake(50), other.queue.intake(50)]);
      ids = ids.concat(more.flatMap((i) => i.events.map((t) => t.inboxId)));
    }
    expect(new Set(ids).size).toBe(300);
    expect(await e.query('SELECT count(*) AS n FROM processing')).toEqual([{ n: 300 }]);
    expect(await e.stores.readings.depth()).toBe(300);
  });

  it('takes in a row whose transaction committed after a later row was taken in', async () => {
    await open();
    // A receiver transaction that took its id first and commits last.
    const late = await e.query<{ id: number }>("SELECT nextval(pg_get_serial_sequence('inbox_events', 'id')) AS id");
    await storeMany(1);
    await e.stores.queue.intake();
    const event = appointmentEvent({ serviceId: 'apt_late' });
    await e.query(
      `WITH ins AS (INSERT INTO inbox_events (id, event_id, event_type, headers, body, received_at) VALUES (?, ?, 'appointment.created', '{}', ?, 0) RETURNING id)
       INSERT INTO inbox_intake (inbox_id) SELECT id FROM ins`,
      late[0]!.id,
      event.eventId,
      Buffer.from(JSON.stringify(event)),
    );
    expect((await other.queue.intake()).events.map((t) => t.entityKey)).toEqual(['appointment:apt_late']);
  });

  it('lets one mapping record stand when both record at once', async () => {
    await open();
    const standing = await Promise.all([e.stores.mappings.record('doctor', 'doc_1', 'D1'), other.mappings.record('doctor', 'doc_1', 'D2')]);
    expect(standing[0]).toBe(standing[1]);
    expect(await other.mappings.find('doctor', 'doc_1')).toBe(standing[0]);
  });

  it('sees a patient snapshot the other replica noted before its event committed', async () => {
    await open();
    await e.stores.versions.note('patient:p', { occurredAt: '2026-01-15T10:00:00.000Z', hash: 'h' }, 'ev-1');
    expect(await other.versions.newest('patient:p')).toEqual({ occurredAt: '2026-01-15T10:00:00.000Z', hash: 'h' });
  });

  it('does not hand a mapping being posted by one replica to the other until its lease runs out', async () => {
    await open();
    const { inboxId } = await e.store({ eventId: 'ev-m', eventType: 'appointment.created' });
    await e.stores.queue.commit([{ kind: 'applied', inboxId, versions: [], claims: [{ entityType: 'doctor', serviceId: 'doc_1', emrId: 'D1' }] }]);
    expect(await e.stores.mappingOutbox.claimDue(10, LEASE)).toHaveLength(1);
    expect(await other.mappingOutbox.claimDue(10, LEASE)).toEqual([]);
    e.clock.advance(LEASE);
    expect(await other.mappingOutbox.claimDue(10, LEASE)).toHaveLength(1);
  });
});
