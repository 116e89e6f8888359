// The crosswalk over HL7 v2: the processor applies events through the real HL7 v2 port to the bundled HL7 EMR over
// loopback MLLP. AIP-3 and AIL-3 carry the EMR's id alone when the crosswalk (or the snapshot's externalId) has one,
// the service's id under HL7_ASSIGNING_AUTHORITY otherwise; HL7_REQUIRE_MAPPED holds an appointment (waiting, no
// attempt used, nothing sent) until its doctor is mapped, while a patient's own event still goes; an interface
// engine cannot be asked whether a record exists, nor searched.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config.ts';
import { createHl7Emr, type Hl7Emr } from '../../../src/emr/hl7v2/index.ts';
import { emrSettings } from '../../../src/emr/settings.ts';
import { startHl7Emr, type RunningHl7Emr } from '../../../src/hl7-emr/server.ts';
import { silentLogger } from '../../../src/logger.ts';
import { createSqliteEmrState } from '../../../src/storage/sqlite/emr-state.ts';
import { appointmentEvent, applyThrough, processorFixture, type ProcessorFixture } from '../../support/processor-fixture.ts';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** AIP-3 and AIL-3 as the event's doctor (Dr Test Doctor, doc_1) and location (Test Clinic Room 1, loc_1) go unmapped. */
const DOCTOR_BY_SERVICE_ID = 'doc_1^Doctor^Dr Test^^^^^^SERVICE';
const LOCATION_BY_SERVICE_ID = 'loc_1^^^^^^^^Test Clinic Room 1^^SERVICE';

interface Hl7Fixture {
  f: ProcessorFixture;
  emr: RunningHl7Emr;
  port: Hl7Emr;
}

/** A processor applying events through the HL7 v2 port (its crosswalk answers too) to the bundled HL7 EMR. */
async function hl7Fixture(env: Record<string, string> = {}): Promise<Hl7Fixture> {
  const f = processorFixture();
  closers.push(async () => f.db.close());
  const emr = await startHl7Emr({ port: 0, logger: silentLogger() });
  closers.push(() => emr.close());
  const config = parseConfig({
    EMR_PROTOCOL: 'hl7v2',
    HL7_SEND_URL: emr.url,
    HL7_LISTEN_HOST: '127.0.0.1',
    HL7_LISTEN_PORT: '0',
    HL7_ACK_TIMEOUT_MS: '2000',
    SERVICE_BASE_URL: 'bundled',
    ...env,
  });
  const port = await createHl7Emr({ settings: emrSettings(config.emr, 'hl7v2'), sendUrl: () => emr.url, tls: {}, clock: f.clock, logger: silentLogger() });
  closers.push(() => port.close());
  await port.start!({
    state: createSqliteEmrState(f.db, f.clock)('hl7v2'),
    recordIdentified: async () => undefined,
    documentPushed: async () => undefined,
    documentCancelled: async () => 'unknown',
  });
  applyThrough(f.emr, port);
  Object.assign(f.emr, { mayCreate: port.mayCreate, prefersMapped: port.prefersMapped, recordExists: port.recordExists, suggest: port.suggest });
  return { f, emr, port };
}

const bookedIn = (emr: RunningHl7Emr, serviceId = 'apt_1') => emr.appointments().find((a) => a.serviceId === serviceId);

describe('AIP-3 and AIL-3 over HL7 v2', () => {
  it('carry the service’s ids under our assigning authority while nothing is mapped, as before', async () => {
    const { f, emr } = await hl7Fixture();
    const eventId = f.store(appointmentEvent());

    await f.processor.runOnce();

    expect(f.state(eventId)?.state).toBe('applied');
    expect(bookedIn(emr)).toMatchObject({ doctor: DOCTOR_BY_SERVICE_ID, location: LOCATION_BY_SERVICE_ID });
    expect(await f.stores.crosswalk.list({ limit: 10 })).toEqual([]);
  });

  it('carry the crosswalk’s EMR id for a mapped doctor as the first component alone, the name after it', async () => {
    const { f, emr } = await hl7Fixture();
    await f.stores.crosswalk.set({ entityType: 'doctor', serviceId: 'doc_1' }, 'DR-17', 'operator', { post: true });
    f.store(appointmentEvent());

    await f.processor.runOnce();

    expect(bookedIn(emr)).toMatchObject({ doctor: 'DR-17^Doctor^Dr Test', location: LOCATION_BY_SERVICE_ID });
  });

  it('carry the snapshot’s externalId for a location, kept in the crosswalk as the service’s', async () => {
    const { f, emr } = await hl7Fixture();
    const event = appointmentEvent();
    (event.location as { externalId: string }).externalId = 'DEPT-4';
    f.store(event);

    await f.processor.runOnce();

    expect(bookedIn(emr)).toMatchObject({ doctor: DOCTOR_BY_SERVICE_ID, location: 'DEPT-4^^^^^^^^Test Clinic Room 1' });
    expect(await f.stores.crosswalk.get({ entityType: 'location', serviceId: 'loc_1' })).toMatchObject({ emrId: 'DEPT-4', source: 'service' });
  });

  it('carry a mapping made after the appointment was booked in its next message', async () => {
    const { f, emr } = await hl7Fixture();
    f.store(appointmentEvent());
    await f.processor.runOnce();
    await f.stores.crosswalk.set({ entityType: 'doctor', serviceId: 'doc_1' }, 'DR-17', 'operator', { post: true });
    f.store(appointmentEvent({ eventType: 'appointment.completed', status: 'Completed', occurredAt: '2026-01-15T10:00:00.000Z' }));

    await f.processor.runOnce();

    expect(bookedIn(emr)).toMatchObject({ status: 'Complete', doctor: 'DR-17^Doctor^Dr Test' });
  });
});

describe('HL7_REQUIRE_MAPPED=doctor', () => {
  it('holds an appointment whose doctor nobody mapped: waiting, no attempt used, nothing sent, only the doctor listed', async () => {
    const { f, emr } = await hl7Fixture({ HL7_REQUIRE_MAPPED: 'doctor' });
    const eventId = f.store(appointmentEvent());

    await f.processor.runOnce();

    expect(f.state(eventId)).toMatchObject({ state: 'waiting', attempts: 0 });
    expect(emr.received()).toEqual([]);
    expect(await f.stores.crosswalk.list({ state: 'unmapped', limit: 10 })).toEqual([
      expect.objectContaining({ entityType: 'doctor', serviceId: 'doc_1', name: 'Dr Test Doctor', waitingEvents: 1 }),
    ]);
  });

  it('sends it once the doctor is mapped, with the EMR’s id in AIP-3 and the location by the service’s id', async () => {
    const { f, emr } = await hl7Fixture({ HL7_REQUIRE_MAPPED: 'doctor' });
    const eventId = f.store(appointmentEvent());
    await f.processor.runOnce();

    const { woken } = await f.stores.crosswalk.set({ entityType: 'doctor', serviceId: 'doc_1' }, 'DR-17', 'operator', { post: true });
    await f.processor.runOnce();

    expect(woken).toBe(1);
    expect(f.state(eventId)?.state).toBe('applied');
    expect(emr.received().map((m) => m.type)).toEqual(['ADT^A28', 'SIU^S12']);
    expect(bookedIn(emr)).toMatchObject({ doctor: 'DR-17^Doctor^Dr Test', location: LOCATION_BY_SERVICE_ID });
  });

  it('needs no person for a doctor the service already knows by the EMR’s id (the snapshot’s externalId)', async () => {
    const { f, emr } = await hl7Fixture({ HL7_REQUIRE_MAPPED: 'doctor' });
    const event = appointmentEvent();
    (event.doctor as { externalId: string }).externalId = 'DR-9';
    const eventId = f.store(event);

    await f.processor.runOnce();

    expect(f.state(eventId)?.state).toBe('applied');
    expect(bookedIn(emr)?.doctor).toBe('DR-9^Doctor^Dr Test');
  });

  it('lets a patient’s own event go: its ADT is sent while the patient’s appointment waits', async () => {
    const { f, emr } = await hl7Fixture({ HL7_REQUIRE_MAPPED: 'doctor,location' });
    const appointment = f.store(appointmentEvent());
    const patient = f.store({
      eventId: randomUUID(),
      eventType: 'patient.created',
      occurredAt: '2026-01-15T08:00:00.000Z',
      clinicId: 'clinic_1',
      patient: { serviceId: 'pat_apt_1', externalId: null, name: 'Test Patient One', phone: '+15550000001' },
    });

    await f.processor.runOnce();

    expect([f.state(patient)?.state, f.state(appointment)?.state]).toEqual(['applied', 'waiting']);
    expect(emr.received().map((m) => m.type)).toEqual(['ADT^A28']);
    expect(emr.patients().map((p) => p.serviceId)).toEqual(['pat_apt_1']);
  });
});

describe('the HL7 v2 port beside the crosswalk', () => {
  it('takes a person’s EMR id as given (it cannot ask the EMR) and has no suggestions', async () => {
    const { port } = await hl7Fixture();

    expect(await port.recordExists!('doctor', 'DR-404')).toBeUndefined();
    expect(await port.suggest!('location', { name: 'Room 1' })).toEqual([]);
  });

  it('may name by the service’s id every doctor and location HL7_REQUIRE_MAPPED does not list, and every patient', async () => {
    const { port } = await hl7Fixture({ HL7_REQUIRE_MAPPED: 'location' });

    expect([await port.mayCreate!('patient'), await port.mayCreate!('doctor'), await port.mayCreate!('location')]).toEqual([true, true, false]);
    expect([await port.prefersMapped!('patient'), await port.prefersMapped!('doctor'), await port.prefersMapped!('location')]).toEqual([false, true, true]);
  });
});
