// Appointments booked into a scheduling EMR's Slots (src/emr/fhir/appointments.ts, slot-booking.ts), against the
// bundled FHIR server's vendor profile over HTTP: booked into the doctor's free Slot with the patient alone,
// rescheduled by replacing the Slot (the old one freed by the EMR), cancelled, completed and no-show by their
// status, every change under If-Match; no free Slot is a dead letter naming the practitioner and both times; a
// booking whose answer was lost is found again, by its identifier or by the patient in the Slot, never booked twice.
import type { Appointment, Patient, Slot } from '@medplum/fhirtypes';
import { afterEach, describe, expect, it } from 'vitest';
import { plainFhirEmr } from '../../../bench/support/fhir-emr.ts';
import type { FhirEmr } from '../../../src/emr/fhir/index.ts';
import type { AppointmentInput } from '../../../src/emr/port.ts';
import { call, startVendor } from '../../fhir-server/vendor/support.ts';

const SYSTEM = 'urn:emr-bridge:service';
/** Monday 9 March 2026 in New York (EDT from the day before): 10:00, 10:15 and 11:00 local. */
const TEN = '2026-03-09T14:00:00.000Z';
const QUARTER_PAST = '2026-03-09T14:15:00.000Z';
const ELEVEN = '2026-03-09T15:00:00.000Z';
const slotAt = (instant: string) => `sch-3001-${instant.replace(/[-:]/g, '').slice(0, 13)}Z`;

let emr: FhirEmr | undefined;
afterEach(async () => {
  await emr?.close();
  emr = undefined;
});

async function vendorEmr() {
  const vendor = await startVendor();
  emr = plainFhirEmr(vendor.base, { identifierSystem: SYSTEM, booking: 'slot' });
  const patient = await emr.ensurePatient({ serviceId: 'pat_1', name: 'Test Patient', phone: '+15550000001' });
  return { base: vendor.base, emr, patientId: patient.id };
}

const input = (patientId: string, o: Partial<AppointmentInput> = {}): AppointmentInput => ({
  serviceId: 'apt_1',
  status: 'Approved',
  startsAt: TEN,
  startsAtLocal: '2026-03-09T10:00:00.000-04:00',
  mode: 'Offline',
  token: 'A-1',
  notes: '',
  payment: { type: 'Cash', amountPaid: 0, balanceDue: 0, currency: 'USD', payAtClinic: true },
  occurredAt: '2026-03-01T00:00:00.000Z',
  patientId,
  practitionerId: 'pr-1001',
  locationId: 'loc-2001',
  ...o,
});

const read = async <T>(base: string, ref: string) => (await call<T>(base, 'GET', ref)).body;

describe('an appointment booked into the doctor’s Slot', () => {
  it('books the free Slot at its start, with the patient alone, taking the Slot’s start and end', async () => {
    const { base, emr, patientId } = await vendorEmr();

    const booked = await emr.ensureAppointment(input(patientId));

    const appointment = await read<Appointment>(base, `Appointment/${booked.id}`);
    expect(booked.created).toBe(true);
    expect(appointment).toMatchObject({ status: 'booked', start: TEN, end: QUARTER_PAST, slot: [{ reference: `Slot/${slotAt(TEN)}` }] });
    expect(appointment.participant).toEqual([{ actor: { reference: `Patient/${patientId}` }, status: 'accepted' }]);
    expect((await read<Slot>(base, `Slot/${slotAt(TEN)}`)).status).toBe('busy');
  });

  it('is rescheduled twice by replacing its Slot, each old one freed, and cancelled, completed or no-show by its status', async () => {
    const { base, emr, patientId } = await vendorEmr();
    const { id } = await emr.ensureAppointment(input(patientId));

    await emr.updateAppointment(id, input(patientId, { startsAt: QUARTER_PAST }));
    await emr.updateAppointment(id, input(patientId, { startsAt: ELEVEN }));
    const moved = await read<Appointment>(base, `Appointment/${id}`);
    const slots = await Promise.all([TEN, QUARTER_PAST, ELEVEN].map((t) => read<Slot>(base, `Slot/${slotAt(t)}`)));
    await emr.updateAppointment(id, input(patientId, { startsAt: ELEVEN, status: 'Completed' }));

    expect(moved).toMatchObject({ start: ELEVEN, slot: [{ reference: `Slot/${slotAt(ELEVEN)}` }] });
    expect(slots.map((s) => s.status)).toEqual(['free', 'free', 'busy']);
    expect((await read<Appointment>(base, `Appointment/${id}`)).status).toBe('fulfilled');
  });

  it('takes a first snapshot that is already cancelled as booked, then cancelled (the Slot freed)', async () => {
    const { base, emr, patientId } = await vendorEmr();

    const booked = await emr.ensureAppointment(input(patientId, { status: 'Cancelled' }));
    await emr.updateAppointment(booked.id, input(patientId, { status: 'Cancelled' }));

    expect(booked.created).toBe(false);
    expect((await read<Appointment>(base, `Appointment/${booked.id}`)).status).toBe('cancelled');
    expect((await read<Slot>(base, `Slot/${slotAt(TEN)}`)).status).toBe('free');
  });

  it('stays booked for a status a scheduling EMR takes no booking to (Pending, an unknown one), the service’s own in its extension', async () => {
    const { base, emr, patientId } = await vendorEmr();

    const booked = await emr.ensureAppointment(input(patientId, { status: 'Tentative' }));
    await emr.updateAppointment(booked.id, input(patientId, { status: 'Pending' }));

    const appointment = await read<Appointment>(base, `Appointment/${booked.id}`);
    expect(booked.created).toBe(true);
    expect(appointment.status).toBe('booked');
    expect(appointment.extension).toContainEqual({ url: 'https://emr-bridge.dev/fhir/StructureDefinition/service-status', valueString: 'Pending' });
  });

  it('is a dead letter naming the practitioner and both times when no Slot is free, and books once one is opened', async () => {
    const { base, emr, patientId } = await vendorEmr();
    await call(base, 'POST', `_control/staff-edit/Slot/${slotAt(TEN)}`, [{ op: 'replace', path: '/status', value: 'busy-unavailable' }], {
      'content-type': 'application/json',
    });

    const err = await emr.ensureAppointment(input(patientId)).catch((e: unknown) => e);
    await call(base, 'POST', `_control/staff-edit/Slot/${slotAt(TEN)}`, [{ op: 'replace', path: '/status', value: 'free' }], {
      'content-type': 'application/json',
    });
    const replayed = await emr.ensureAppointment(input(patientId));

    expect(err).toMatchObject({ code: 'slot_unavailable', retryable: false });
    expect((err as Error).message).toContain('Practitioner/pr-1001');
    expect((err as Error).message).toContain('2026-03-09T10:00:00.000-04:00');
    expect((err as Error).message).toContain(`${TEN} UTC`);
    expect(replayed.created).toBe(true);
  });
});

describe('a booking whose answer was lost', () => {
  it('is found again by its identifier: booking the same appointment again books nothing', async () => {
    const { base, emr, patientId } = await vendorEmr();
    const first = await emr.ensureAppointment(input(patientId));

    const again = await emr.ensureAppointment(input(patientId));

    expect(again).toEqual({ id: first.id, created: false });
    const all = await call<{ total: number }>(base, 'GET', `Appointment?patient=Patient/${patientId}`);
    expect(all.body.total).toBe(1);
  });

  it('is found again by the patient in the Slot when the EMR kept no identifier of ours', async () => {
    const { base, emr, patientId } = await vendorEmr();
    const first = await emr.ensureAppointment(input(patientId));
    await call(base, 'POST', `_control/staff-edit/Appointment/${first.id}`, [{ op: 'remove', path: '/identifier' }], { 'content-type': 'application/json' });

    const again = await emr.ensureAppointment(input(patientId));

    expect(again).toEqual({ id: first.id, created: false });
  });
});

describe('a staff edit between the adapter’s read and its write', () => {
  it('keeps the staff’s change and applies the snapshot to what is there now', async () => {
    const { base, emr, patientId } = await vendorEmr();
    const { id } = await emr.ensureAppointment(input(patientId));
    await call(base, 'POST', `_control/staff-edit/Appointment/${id}`, [{ op: 'add', path: '/comment', value: 'staff: interpreter needed' }], {
      'content-type': 'application/json',
    });

    await emr.updateAppointment(id, input(patientId, { status: 'NoShow' }));

    expect(await read<Appointment>(base, `Appointment/${id}`)).toMatchObject({ status: 'noshow', comment: 'staff: interpreter needed' });
  });

  it('never writes a patient without If-Match: a snapshot change goes as JSON Patch under the version read', async () => {
    const { base, emr, patientId } = await vendorEmr();

    await emr.updatePatient(patientId, { serviceId: 'pat_1', name: 'Test Patient Renamed', phone: '+15550000001' });

    const counters = (await call<{ withoutIfMatch: number }>(base.replace(/\/fhir$/, ''), 'GET', '_control/counters')).body;
    expect(counters.withoutIfMatch).toBe(0);
    expect((await read<Patient>(base, `Patient/${patientId}`)).name?.[0]?.text).toBe('Test Patient Renamed');
  });
});
