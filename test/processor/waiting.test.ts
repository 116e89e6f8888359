// Events that wait for a person instead of failing (src/processor/resolve.ts, the 'waiting' outcome, the
// crosswalk store's wake-up): against an EMR that keeps its doctors and locations to itself, an appointment whose
// doctor nobody has mapped waits with no attempt used, its entity's later events queue behind it, other entities
// go on, every record it lacks is listed at once, and it applies in order once the record is mapped; a record the
// EMR already carries the service's id on, or the service knows by an EMR id, needs no person.
import { describe, expect, it } from 'vitest';
import { appointmentEvent, processorFixture, type ProcessorFixture } from '../support/processor-fixture.ts';

/** A processor beside an EMR that lets the adapter create patients only (as a vendor EMR does). */
function vendorLike(): ProcessorFixture {
  const f = processorFixture();
  f.emr.creatable.delete('doctor');
  f.emr.creatable.delete('location');
  return f;
}

/** Maps the clinic's one location, so a test is about its doctor alone. */
async function locationMapped(f: ProcessorFixture): Promise<string> {
  const id = f.emr.addMasterRecord({ entityType: 'location', name: 'Test Clinic Room 1' });
  await f.stores.crosswalk.set({ entityType: 'location', serviceId: 'loc_1' }, id, 'operator', { post: true });
  return id;
}

/** The appointment cancelled, `minutes` past nine. */
const cancelled = (serviceId: string, minutes: number) =>
  appointmentEvent({
    serviceId,
    eventType: 'appointment.cancelled',
    status: 'Cancelled',
    occurredAt: `2026-01-15T09:${String(minutes).padStart(2, '0')}:00.000Z`,
  });

describe('an event whose doctor nobody has mapped', () => {
  it('waits with no attempt used and nothing written to the EMR, and lists the doctor as unmapped', async () => {
    const f = vendorLike();
    await locationMapped(f);
    const eventId = f.store(appointmentEvent());

    await f.processor.runOnce();

    expect(f.state(eventId)).toMatchObject({ state: 'waiting', attempts: 0 });
    expect(f.emr.records.practitioner.size).toBe(0);
    expect(f.emr.appointments()).toEqual([]);
    expect(await f.stores.crosswalk.list({ state: 'unmapped', limit: 10 })).toEqual([
      expect.objectContaining({ entityType: 'doctor', serviceId: 'doc_1', name: 'Dr Test Doctor', emrId: null, waitingEvents: 1 }),
    ]);
    const [row] = await f.stores.events.search({ state: 'waiting', limit: 10 });
    expect(row?.waitingFor).toEqual({ entityType: 'doctor', serviceId: 'doc_1' });
  });

  it('holds back its own entity’s later events and lets every other entity go on', async () => {
    const f = vendorLike();
    await locationMapped(f);
    const first = f.store(appointmentEvent({ serviceId: 'apt_1' }));
    const next = f.store(cancelled('apt_1', 30));
    const otherDoctor = appointmentEvent({ serviceId: 'apt_2' });
    (otherDoctor.doctor as { serviceId: string }).serviceId = 'doc_2';
    const doc2 = f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Two' });
    await f.stores.crosswalk.set({ entityType: 'doctor', serviceId: 'doc_2' }, doc2, 'operator', { post: true });
    const other = f.store(otherDoctor);

    await f.processor.runOnce();

    expect(f.state(first)?.state).toBe('waiting');
    expect(f.state(next)).toMatchObject({ state: 'pending', attempts: 0 });
    expect(f.state(other)?.state).toBe('applied');
  });

  it('applies in order once the doctor is mapped, naming the mapped record and creating none', async () => {
    const f = vendorLike();
    await locationMapped(f);
    const doctor = f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    const first = f.store(appointmentEvent({ serviceId: 'apt_1' }));
    const next = f.store(cancelled('apt_1', 30));
    await f.processor.runOnce();

    const { woken } = await f.stores.crosswalk.set({ entityType: 'doctor', serviceId: 'doc_1' }, doctor, 'operator', { post: true });
    await f.processor.runOnce();
    await f.processor.runOnce();

    expect(woken).toBe(1);
    expect([f.state(first)?.state, f.state(next)?.state]).toEqual(['applied', 'applied']);
    expect(f.emr.appointments()).toEqual([expect.objectContaining({ practitionerId: doctor, status: 'Cancelled' })]);
    expect(f.emr.records.practitioner.size).toBe(0);
    expect(f.mappingsPut).toContainEqual({ entityType: 'doctor', serviceId: 'doc_1', externalId: doctor });
  });

  it('lists every record it lacks at once, and waits for the first in the order patient, doctor, location', async () => {
    const f = vendorLike();
    const eventId = f.store(appointmentEvent());

    await f.processor.runOnce();

    const unmapped = await f.stores.crosswalk.list({ state: 'unmapped', limit: 10 });
    expect(unmapped.map((i) => [i.entityType, i.serviceId, i.waitingEvents])).toEqual([
      ['doctor', 'doc_1', 1],
      ['location', 'loc_1', 1],
    ]);
    const [row] = await f.stores.events.search({ eventId: (await f.stores.events.get(eventId))?.eventId ?? '', limit: 1 });
    expect(row?.waitingFor).toEqual({ entityType: 'doctor', serviceId: 'doc_1' });
  });

  it('does not wait forever for a mapping that lands between its decision to wait and the commit of that decision', async () => {
    const f = vendorLike();
    await locationMapped(f);
    const doctor = f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor' });
    const need = f.stores.crosswalk.need.bind(f.stores.crosswalk);
    // The person's mapping commits right after the record is listed as unmapped, before the outcome is written.
    f.stores.crosswalk.need = async (records) => {
      await need(records);
      await f.stores.crosswalk.set({ entityType: 'doctor', serviceId: 'doc_1' }, doctor, 'operator', { post: true });
    };
    const eventId = f.store(appointmentEvent());

    // The clock stands still: the once-a-second backstop does not run again, so only the commit's own check can wake it.
    await f.processor.runOnce();
    await f.processor.runOnce();

    expect(f.state(eventId)?.state).toBe('applied');
    expect(await f.stores.crosswalk.list({ state: 'unmapped', limit: 10 })).toEqual([]);
  });
});

describe('a record the EMR owns that needs no person', () => {
  it('is the EMR’s record carrying the service’s id, kept in the crosswalk as found in the EMR', async () => {
    const f = vendorLike();
    await locationMapped(f);
    const doctor = f.emr.addMasterRecord({ entityType: 'doctor', name: 'Dr Test Doctor', serviceId: 'doc_1' });
    const eventId = f.store(appointmentEvent());

    await f.processor.runOnce();

    expect(f.state(eventId)?.state).toBe('applied');
    expect(await f.stores.crosswalk.get({ entityType: 'doctor', serviceId: 'doc_1' })).toMatchObject({ emrId: doctor, source: 'emr' });
  });

  it('is the EMR id the service knows it by (the snapshot’s externalId), kept in the crosswalk as the service’s', async () => {
    const f = vendorLike();
    const eventId = f.store(appointmentEvent({ externalIds: true }));

    await f.processor.runOnce();

    expect(f.state(eventId)?.state).toBe('applied');
    expect(f.emr.appointments()).toEqual([expect.objectContaining({ practitionerId: 'emr-doc_1', locationId: 'emr-loc_1' })]);
    expect(await f.stores.crosswalk.get({ entityType: 'location', serviceId: 'loc_1' })).toMatchObject({ emrId: 'emr-loc_1', source: 'service' });
  });

  it('costs nothing where the EMR lets the adapter create everything: no crosswalk row is written', async () => {
    const f = processorFixture();
    const eventId = f.store(appointmentEvent());

    await f.processor.runOnce();

    expect(f.state(eventId)?.state).toBe('applied');
    expect(await f.stores.crosswalk.list({ limit: 10 })).toEqual([]);
  });
});
