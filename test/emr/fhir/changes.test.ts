// Changes to records the EMR holds (src/emr/fhir/changes.ts, appointment-merge.ts, patients.ts): read, merge
// the fields emr-bridge owns, write under If-Match, as JSON Patch where the EMR declares only patch and as PUT
// where it declares update; a staff edit landing meanwhile (412) is read again and kept, using no attempt; one
// that keeps landing is a conflict for a person; a record with no version and an EMR that wants one is refused
// clearly; an ETag that is no entity tag falls back to the record's versionId.
import type { Appointment, Patient } from '@medplum/fhirtypes';
import { afterEach, describe, expect, it } from 'vitest';
import { plainFhirEmr } from '../../../bench/support/fhir-emr.ts';
import { EXT } from '../../../src/emr/fhir/mapping.ts';
import type { FhirEmr } from '../../../src/emr/fhir/index.ts';
import type { AppointmentInput } from '../../../src/emr/port.ts';
import { startVersionedFhirServer, type VersionedFhirServer, type VersionedOptions } from '../../support/versioned-fhir-server.ts';

const SYSTEM = 'urn:emr-bridge:service';

let server: VersionedFhirServer | undefined;
let emr: FhirEmr | undefined;
afterEach(async () => {
  await emr?.close();
  await server?.close();
  emr = server = undefined;
});

async function start(opts: VersionedOptions = {}) {
  server = await startVersionedFhirServer(opts);
  emr = plainFhirEmr(server.baseUrl, { identifierSystem: SYSTEM });
  return { server, emr };
}

/** An appointment as the adapter wrote it, then added to by the EMR's staff: a note, their extension, a nurse. */
const heldAppointment = (): Appointment & { id: string } => ({
  resourceType: 'Appointment',
  id: 'a1',
  identifier: [
    { system: SYSTEM, value: 'apt_1' },
    { system: 'urn:hospital:visit', value: 'V-9' },
  ],
  status: 'booked',
  start: '2027-01-04T09:00:00.000Z',
  comment: 'old notes',
  extension: [
    { url: `${EXT}/service-status`, valueString: 'Approved' },
    { url: 'urn:hospital:ext/room-note', valueString: 'wheelchair' },
  ],
  participant: [
    { actor: { reference: 'Patient/p1' }, status: 'accepted' },
    { actor: { reference: 'Practitioner/d1' }, status: 'accepted' },
    { actor: { reference: 'Location/l1' }, status: 'accepted' },
    { actor: { reference: 'Practitioner/nurse-7' }, status: 'accepted' },
  ],
});

const snapshot = (o: Partial<AppointmentInput> = {}): AppointmentInput => ({
  serviceId: 'apt_1',
  status: 'Cancelled',
  startsAt: '2027-01-05T10:00:00.000Z',
  mode: 'Offline',
  token: 'A-1',
  notes: '',
  payment: { type: 'Cash', amountPaid: 0, balanceDue: 0, currency: 'INR', payAtClinic: true },
  occurredAt: '2027-01-01T00:00:00.000Z',
  patientId: 'p1',
  practitionerId: 'd1',
  locationId: 'l1',
  ...o,
});

const writes = (s: VersionedFhirServer) => s.seen.filter((r) => r.method !== 'GET');

describe('an appointment changed in an EMR that takes JSON Patch under If-Match', () => {
  it('sends a JSON Patch of the fields emr-bridge owns under the version it read, keeping what the staff added', async () => {
    const { server, emr } = await start();
    server.hold(heldAppointment());

    await emr.updateAppointment('a1', snapshot());

    expect(writes(server)).toEqual([
      expect.objectContaining({ method: 'PATCH', path: 'Appointment/a1', ifMatch: 'W/"1"', contentType: 'application/json-patch+json' }),
    ]);
    const ops = writes(server)[0]!.body as { path: string }[];
    expect(ops.map((o) => o.path).sort()).toEqual(['/extension', '/start', '/status']);
    const now = server.records.get('Appointment/a1') as Appointment;
    expect(now).toMatchObject({ status: 'cancelled', start: '2027-01-05T10:00:00.000Z', comment: 'old notes' });
    expect(now.identifier).toContainEqual({ system: 'urn:hospital:visit', value: 'V-9' });
    expect(now.extension).toContainEqual({ url: 'urn:hospital:ext/room-note', valueString: 'wheelchair' });
    expect(now.participant?.map((p) => p.actor?.reference)).toContain('Practitioner/nurse-7');
  });

  it('reads again after a staff edit (412) and applies the change to what is there now, keeping the edit', async () => {
    const { server, emr } = await start();
    server.hold(heldAppointment());
    server.staffEditsBeforeWrite('Appointment/a1', (r) => ({ ...r, comment: 'staff: patient called' }) as Appointment);

    await emr.updateAppointment('a1', snapshot());

    expect(writes(server).map((w) => w.ifMatch)).toEqual(['W/"1"', 'W/"2"']);
    expect(server.records.get('Appointment/a1')).toMatchObject({ status: 'cancelled', comment: 'staff: patient called', meta: { versionId: '3' } });
  });

  it('gives up after a few rounds when the record keeps changing: a conflict for a person, not retried', async () => {
    const { server, emr } = await start();
    server.hold(heldAppointment());
    server.staffEditsBeforeWrite('Appointment/a1', (r) => ({ ...r }), 100);

    const err = await emr.updateAppointment('a1', snapshot()).catch((e: unknown) => e);

    expect(err).toMatchObject({ code: 'emr_edit_conflict', retryable: false });
    expect((err as Error).message).toContain('Appointment/a1');
    expect(writes(server)).toHaveLength(4);
  });

  it('writes nothing when the record already says what the snapshot says', async () => {
    const { server, emr } = await start();
    server.hold(heldAppointment());
    await emr.updateAppointment('a1', snapshot());
    const before = writes(server).length;

    await emr.updateAppointment('a1', snapshot());

    expect(writes(server)).toHaveLength(before);
  });

  it('falls back to the record’s versionId when the ETag is not an entity tag', async () => {
    const { server, emr } = await start({ etagOverride: 'version-1-no-quotes' });
    server.hold(heldAppointment());

    await emr.updateAppointment('a1', snapshot());

    expect(writes(server)[0]).toMatchObject({ ifMatch: 'W/"1"' });
  });

  it('is refused clearly when the EMR wants If-Match and gives the record no version', async () => {
    const { server, emr } = await start({ noVersions: true });
    server.hold(heldAppointment());

    await expect(emr.updateAppointment('a1', snapshot())).rejects.toMatchObject({ code: 'emr_rejected', message: expect.stringContaining('If-Match') });
  });
});

describe('changes in an EMR that declares update', () => {
  it('PUTs the merged record under If-Match', async () => {
    const { server, emr } = await start({ changeBy: 'update' });
    server.hold(heldAppointment());

    await emr.updateAppointment('a1', snapshot());

    expect(writes(server)).toEqual([expect.objectContaining({ method: 'PUT', path: 'Appointment/a1', ifMatch: 'W/"1"' })]);
    expect(server.records.get('Appointment/a1')).toMatchObject({ status: 'cancelled', comment: 'old notes' });
  });

  it('links a patient under If-Match, reading again after a staff edit', async () => {
    const { server, emr } = await start({ changeBy: 'update' });
    const patient: Patient & { id: string } = { resourceType: 'Patient', id: 'p1', name: [{ text: 'Their Name' }] };
    server.hold(patient);
    server.staffEditsBeforeWrite('Patient/p1', (r) => ({ ...r, birthDate: '1970-01-01' }) as Patient);

    await emr.linkPatient('p1', 'pat_1');

    expect(writes(server).map((w) => w.ifMatch)).toEqual(['W/"1"', 'W/"2"']);
    expect(server.records.get('Patient/p1')).toMatchObject({ birthDate: '1970-01-01', identifier: [{ system: SYSTEM, value: 'pat_1' }] });
  });
});
