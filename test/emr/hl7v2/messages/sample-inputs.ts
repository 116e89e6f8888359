// The inputs the adapter's own samples (samples/hl7/adt-*.hl7, siu-s1*.hl7) were built from: samples.test.ts
// builds them again and compares byte for byte, so a sample never drifts from what the builders write.
// Synthetic people only.
import type { PatientMessageInput } from '../../../../src/emr/hl7v2/messages/adt.ts';
import type { HeaderContext } from '../../../../src/emr/hl7v2/messages/header.ts';
import type { AppointmentMessageInput } from '../../../../src/emr/hl7v2/messages/siu.ts';

export const AA = 'SERVICE';
export const EMR_AA = 'HOSPITAL';

export const header = (controlId: string): HeaderContext => ({
  sendingApplication: 'EMR-BRIDGE',
  sendingFacility: 'SERVICE',
  receivingApplication: 'EMR',
  receivingFacility: 'HOSPITAL',
  assigningAuthority: AA,
  controlId,
  now: Date.parse('2026-03-01T08:00:00.000Z'),
});

const patient = { serviceId: 'pat_s100', name: 'Sample Patient One', phone: '+15550100001' };
const renamed = { ...patient, name: 'Sample Patient Renamed' };

export const PATIENT_SAMPLES: Record<string, PatientMessageInput> = {
  'adt-a28.hl7': { trigger: 'A28', patient },
  'adt-a31.hl7': { trigger: 'A31', patient: renamed, mrn: 'MRN-000101', emrAssigningAuthority: EMR_AA },
  'adt-a04.hl7': { trigger: 'A04', patient },
  'adt-a08.hl7': { trigger: 'A08', patient: renamed, mrn: 'MRN-000101', emrAssigningAuthority: EMR_AA },
};

const base: Omit<AppointmentMessageInput, 'trigger'> = {
  appointment: {
    serviceId: 'apt_s100',
    status: 'Approved',
    startsAt: '2026-03-02T09:00:00.000Z',
    startsAtLocal: '2026-03-02T10:00:00.000+01:00',
    durationMinutes: 20,
    notes: 'Fasting since midnight.\nBring earlier results.',
  },
  patient,
  doctor: { serviceId: 'doc_s100', name: 'Dr Sample Doctor' },
  location: { serviceId: 'loc_s100', name: 'Sample Clinic Room 1' },
};
const named = { fillerId: 'APT-7001', patient: { ...patient, mrn: 'MRN-000101' }, emrAssigningAuthority: EMR_AA };

export const APPOINTMENT_SAMPLES: Record<string, AppointmentMessageInput> = {
  'siu-s12.hl7': { ...base, trigger: 'S12' },
  'siu-s13.hl7': {
    ...base,
    ...named,
    trigger: 'S13',
    appointment: { ...base.appointment, startsAt: '2026-03-03T13:30:00.000Z', startsAtLocal: '2026-03-03T14:30:00.000+01:00' },
  },
  'siu-s14.hl7': { ...base, ...named, trigger: 'S14', appointment: { ...base.appointment, status: 'Completed' } },
  'siu-s15.hl7': { ...base, ...named, trigger: 'S15', appointment: { ...base.appointment, status: 'Cancelled' } },
};
