// Finding and claiming records against a FHIR server that does not filter as asked (src/emr/fhir/claims.ts,
// search.ts, created.ts): a search that ignores `identifier` or `_count`, an OperationOutcome among the entries, a
// create answered with headers only. The adapter never adopts, and never writes to, a record that does not carry
// the service's identifier; two records carrying it are a conflict for a person; a create's id comes from Location.
import type { Appointment, Patient } from '@medplum/fhirtypes';
import { afterEach, describe, expect, it } from 'vitest';
import { plainFhirEmr } from '../../../bench/support/fhir-emr.ts';
import { EmrError } from '../../../src/emr/errors.ts';
import type { FhirEmr } from '../../../src/emr/fhir/index.ts';
import type { AppointmentInput } from '../../../src/emr/port.ts';
import { type CarelessFhirServer, type CarelessOptions, startCarelessFhirServer } from '../../support/careless-fhir-server.ts';

const SYSTEM = 'urn:emr-bridge:service';

let server: CarelessFhirServer | undefined;
let emr: FhirEmr | undefined;
afterEach(async () => {
  await emr?.close();
  await server?.close();
  emr = server = undefined;
});

async function start(opts: CarelessOptions = {}): Promise<{ server: CarelessFhirServer; emr: FhirEmr }> {
  server = await startCarelessFhirServer(opts);
  emr = plainFhirEmr(server.baseUrl, { identifierSystem: SYSTEM });
  return { server, emr };
}

/** Another person's chart, as the EMR's staff made it: another identifier, a name the adapter must never change. */
const otherPersonsChart = (): Patient => ({
  resourceType: 'Patient',
  identifier: [{ system: 'urn:hospital:mrn', value: 'MRN-77' }],
  name: [{ text: 'Someone Else' }],
});

const withServiceId = (resource: Patient, serviceId: string): Patient => ({
  ...resource,
  identifier: [...(resource.identifier ?? []), { system: SYSTEM, value: serviceId }],
});

const writesTo = (s: CarelessFhirServer, ref: string) => s.seen.filter((r) => r.method !== 'GET' && r.path.startsWith(ref));

function appointment(serviceId: string, ids: { patientId: string; practitionerId: string; locationId: string }): AppointmentInput {
  return {
    serviceId,
    status: 'Approved',
    startsAt: '2027-01-04T09:00:00.000Z',
    mode: 'Offline',
    token: 'A-1',
    notes: '',
    payment: { type: 'Cash', amountPaid: 0, balanceDue: 0, currency: 'INR', payAtClinic: true },
    occurredAt: '2027-01-01T00:00:00.000Z',
    ...ids,
  };
}

describe('a server that ignores the identifier search parameter', () => {
  it('never takes another person’s chart for a new patient, and never writes to it', async () => {
    const { server, emr } = await start();
    const other = server.hold(otherPersonsChart());

    const claimed = await emr.ensurePatient({ serviceId: 'pat_new', name: 'New Patient', phone: '+15550000001' });
    await emr.updatePatient(claimed.id, { serviceId: 'pat_new', name: 'New Patient', phone: '+15550000002' });

    expect(claimed).toEqual({ id: expect.not.stringMatching(`^${other}$`), created: true });
    expect(writesTo(server, `Patient/${other}`)).toEqual([]);
    expect(server.records.get(`Patient/${other}`)).toMatchObject({
      identifier: [{ system: 'urn:hospital:mrn', value: 'MRN-77' }],
      name: [{ text: 'Someone Else' }],
    });
    expect(server.records.get(`Patient/${claimed.id}`)).toMatchObject({ identifier: [{ system: SYSTEM, value: 'pat_new' }] });
  });

  it('never takes another appointment for a new one, and never overwrites it', async () => {
    const { server, emr } = await start();
    const otherAppointment: Appointment = { resourceType: 'Appointment', status: 'booked', start: '2026-12-24T10:00:00.000Z', participant: [] };
    const other = server.hold(otherAppointment);
    const ids = {
      patientId: (await emr.ensurePatient({ serviceId: 'pat_a', name: 'A', phone: '+15550000003' })).id,
      practitionerId: (await emr.ensurePractitioner({ serviceId: 'doc_a', name: 'Dr A' })).id,
      locationId: (await emr.ensureLocation({ serviceId: 'loc_a', name: 'Room A' })).id,
    };

    const claimed = await emr.ensureAppointment(appointment('apt_a', ids));
    await emr.updateAppointment(claimed.id, { ...appointment('apt_a', ids), status: 'Cancelled' });

    expect(claimed.created).toBe(true);
    expect(claimed.id).not.toBe(other);
    expect(writesTo(server, `Appointment/${other}`)).toEqual([]);
    expect(server.records.get(`Appointment/${other}`)).toMatchObject({ start: '2026-12-24T10:00:00.000Z', status: 'booked' });
  });

  it('finds the record that carries the identifier when the answer holds others too', async () => {
    const { server, emr } = await start({ pageSize: 10 });
    server.hold(otherPersonsChart());
    const ours = server.hold(withServiceId({ resourceType: 'Patient', name: [{ text: 'Ours' }] }, 'pat_ours'));
    server.hold(otherPersonsChart());

    expect(await emr.ensurePatient({ serviceId: 'pat_ours', name: 'Ours', phone: '+15550000004' })).toEqual({ id: ours, created: false });
    expect(server.seen.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('treats two records carrying one service id as a conflict naming both, never a pick', async () => {
    const { server, emr } = await start({ pageSize: 10 });
    const first = server.hold(withServiceId(otherPersonsChart(), 'pat_twice'));
    const second = server.hold(withServiceId({ resourceType: 'Patient' }, 'pat_twice'));

    const err = await emr.ensurePatient({ serviceId: 'pat_twice', name: 'Twice', phone: '+15550000005' }).catch((e: unknown) => e);

    expect(err).toBeInstanceOf(EmrError);
    expect(err).toMatchObject({ code: 'emr_record_conflict', retryable: false });
    expect((err as Error).message).toContain(`Patient/${first}`);
    expect((err as Error).message).toContain(`Patient/${second}`);
    expect(server.seen.filter((r) => r.method !== 'GET')).toEqual([]);
  });
});

describe('a search answer that is more than its matches', () => {
  it('skips an OperationOutcome entry (search.mode outcome) and takes the match after it', async () => {
    const { server, emr } = await start({ outcomeFirst: true, pageSize: 10 });
    const ours = server.hold(withServiceId({ resourceType: 'Patient' }, 'pat_after_outcome'));

    expect(await emr.ensurePatient({ serviceId: 'pat_after_outcome', name: 'P', phone: '+15550000006' })).toEqual({ id: ours, created: false });
    expect(server.seen.some((r) => r.path.startsWith('Patient/search-note'))).toBe(false);
  });

  it('follows next links past an unrelated first page to the true match, and adopts nothing else', async () => {
    const { server, emr } = await start({ pageSize: 1 });
    const other = server.hold(otherPersonsChart());
    const ours = server.hold(withServiceId({ resourceType: 'Patient' }, 'pat_page_two'));

    const claimed = await emr.ensurePatient({ serviceId: 'pat_page_two', name: 'P', phone: '+15550000007' });
    await emr.linkPatient(claimed.id, 'pat_page_two');

    expect(claimed).toEqual({ id: ours, created: false });
    expect(writesTo(server, `Patient/${other}`)).toEqual([]);
    expect(server.seen.filter((r) => r.path.startsWith('Patient?')).length).toBe(2);
  });

  it('refuses a next link off the FHIR base (the token is never sent there)', async () => {
    const { server, emr } = await start({ pageSize: 1, nextBase: 'http://127.0.0.2:9/elsewhere/' });
    server.hold(otherPersonsChart());
    server.hold(otherPersonsChart());

    await expect(emr.ensurePatient({ serviceId: 'pat_x', name: 'X', phone: '+15550000008' })).rejects.toMatchObject({ code: 'emr_rejected' });
    expect(server.seen.filter((r) => r.method === 'POST')).toEqual([]);
  });
});

describe('a create answered with headers only', () => {
  it('reads the new record’s id from Location when the body is empty', async () => {
    const { server, emr } = await start({ headersOnlyCreate: true });

    const claimed = await emr.ensurePatient({ serviceId: 'pat_minimal', name: 'M', phone: '+15550000009' });

    expect(claimed.created).toBe(true);
    expect(server.records.get(`Patient/${claimed.id}`)).toMatchObject({ identifier: [{ system: SYSTEM, value: 'pat_minimal' }] });
  });

  it('reads the id from Location for a conditional create too, found or made', async () => {
    const { server, emr } = await start({ headersOnlyCreate: true, conditionalCreate: true });

    const made = await emr.ensurePractitioner({ serviceId: 'doc_minimal', name: 'Dr M' });
    const again = await emr.ensurePractitioner({ serviceId: 'doc_minimal', name: 'Dr M' });

    expect(made.created).toBe(true);
    expect(again).toEqual({ id: made.id, created: false });
    expect(server.seen.filter((r) => r.method === 'POST' && r.path === 'Practitioner')).toHaveLength(2);
  });

  it('finds the record by its identifier when the answer names no Location either', async () => {
    const { server, emr } = await start({ noLocation: true });

    const claimed = await emr.ensureLocation({ serviceId: 'loc_nameless', name: 'Room N' });

    expect(server.records.get(`Location/${claimed.id}`)).toMatchObject({ identifier: [{ system: SYSTEM, value: 'loc_nameless' }] });
    expect(server.seen.filter((r) => r.method === 'POST')).toHaveLength(1);
  });
});

describe('a refusal of an interaction for every record alike', () => {
  it('is an EMR-wide incident naming the interaction (405), not a refusal of this one record', async () => {
    const { emr } = await start({ refuseCreateOf: ['Practitioner'] });

    const err = await emr.ensurePractitioner({ serviceId: 'doc_refused', name: 'Dr R' }).catch((e: unknown) => e);

    expect(err).toMatchObject({ code: 'emr_incompatible', incident: true, retryable: true, httpStatus: 405 });
    expect((err as Error).message).toContain('POST Practitioner');
  });
});
