// Events that wait for a mapping, as an operator meets them over HTTP (SQLite, the in-memory EMR keeping its doctors
// and locations): an operator's PUT takes up every event waiting for the record, in order, with no attempt used;
// and removing a mapping while events naming that record are being applied loses none of them.
import { describe, expect, it } from 'vitest';
import { appointmentEvent } from '../support/processor-fixture.ts';
import { type CrosswalkAdmin, crosswalkAdmin } from '../support/crosswalk-admin.ts';

/** The clinic's location mapped, so a test is about its doctor alone. */
async function locationMapped(a: CrosswalkAdmin): Promise<void> {
  await a.map('location', 'loc_1', a.f.emr.addMasterRecord({ entityType: 'location', name: 'Test Clinic Room 1' })).expect(200);
}

describe("an operator's mapping", () => {
  it('takes up the events waiting for the doctor, in order, with no attempt used', async () => {
    const a = crosswalkAdmin();
    await locationMapped(a);
    const doctor = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    const created = a.f.store(appointmentEvent({ serviceId: 'apt_1' }));
    const cancelled = a.f.store(
      appointmentEvent({ serviceId: 'apt_1', eventType: 'appointment.cancelled', status: 'Cancelled', occurredAt: '2026-01-15T09:30:00.000Z' }),
    );
    const other = a.f.store(appointmentEvent({ serviceId: 'apt_2' }));
    await a.f.processor.runOnce();
    expect([a.f.state(created)?.state, a.f.state(cancelled)?.state, a.f.state(other)?.state]).toEqual(['waiting', 'pending', 'waiting']);
    const [item] = (await a.send('viewer', 'get', '/crosswalk?state=unmapped').expect(200)).body.items;
    expect(item).toMatchObject({ entityType: 'doctor', serviceId: 'doc_1', waitingEvents: 2 });

    await a.map('doctor', 'doc_1', doctor).expect(200);
    await a.f.processor.runOnce();
    await a.f.processor.runOnce();

    expect([created, cancelled, other].map((id) => a.f.state(id))).toEqual(
      [created, cancelled, other].map(() => expect.objectContaining({ state: 'applied', attempts: 1 })),
    );
    expect(a.f.emr.appointments()).toEqual([
      expect.objectContaining({ serviceId: 'apt_1', practitionerId: doctor, status: 'Cancelled' }),
      expect.objectContaining({ serviceId: 'apt_2', practitionerId: doctor }),
    ]);
    expect(a.f.emr.records.practitioner.size).toBe(0);
    expect((await a.send('viewer', 'get', '/crosswalk?state=unmapped').expect(200)).body.items).toEqual([]);
  });
});

describe('removing a mapping while events naming the record are being applied', () => {
  it('loses none: those in flight apply with the record they resolved, later ones wait and apply once it is mapped again', async () => {
    const a = crosswalkAdmin();
    await locationMapped(a);
    const doctor = a.f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    await a.map('doctor', 'doc_1', doctor).expect(200);
    // The EMR holds the appointments' writes until the mapping is removed.
    let removed!: () => void;
    const removal = new Promise<void>((r) => {
      removed = r;
    });
    let inFlight!: () => void;
    const reached = new Promise<void>((r) => {
      inFlight = r;
    });
    const claim = a.f.emr.claimAppointment.bind(a.f.emr);
    a.f.emr.claimAppointment = async (c) => {
      inFlight();
      await removal;
      return claim(c);
    };
    // Eight in flight at once (the processor applies up to EMR_MAX_CONCURRENCY, 32 by default); four more come after the removal.
    const inFlightIds = Array.from({ length: 8 }, (_, i) => a.f.store(appointmentEvent({ serviceId: `apt_${i}` })));

    const pass = a.f.processor.runOnce();
    await reached;
    await a.send('operator', 'delete', '/crosswalk/doctor/doc_1').expect(204);
    const laterIds = Array.from({ length: 4 }, (_, i) => a.f.store(appointmentEvent({ serviceId: `apt_later_${i}` })));
    removed();
    await pass;
    await a.f.processor.runOnce();

    expect(inFlightIds.map((id) => a.f.state(id)?.state)).toEqual(inFlightIds.map(() => 'applied'));
    expect(laterIds.map((id) => a.f.state(id)?.state)).toEqual(laterIds.map(() => 'waiting'));
    expect(a.f.emr.appointments()).toHaveLength(inFlightIds.length);
    const ids = [...inFlightIds, ...laterIds];

    await a.map('doctor', 'doc_1', doctor).expect(200);
    await a.f.processor.runOnce();

    expect(ids.map((id) => a.f.state(id)?.state)).toEqual(ids.map(() => 'applied'));
    expect(new Set(a.f.emr.appointments().map((x) => x.practitionerId))).toEqual(new Set([doctor]));
    expect(a.f.emr.appointments()).toHaveLength(ids.length);
  });
});
