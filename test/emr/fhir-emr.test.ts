// The FHIR EmrPort against the real bundled FHIR server: one record per serviceId however often (or
// concurrently) it is claimed, the EMR's own patient found by the service's externalId, snapshots applied
// to the Patients it made and never to the EMR's own (differences counted), status mapping with unknown
// values kept, documents found by type and watermark, outcomes recorded once, and the retryable/permanent
// split of failures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { createFhirHttp } from '../../src/emr/fhir/http.ts';
import { createFhirEmr } from '../../src/emr/fhir/index.ts';
import type { AppointmentInput, EmrPort } from '../../src/emr/port.ts';
import { AppError } from '../../src/errors.ts';
import { startFhirServer, type RunningFhirServer } from '../../src/fhir-server/server.ts';
import { silentLogger } from '../../src/logger.ts';
import { createMetrics } from '../../src/metrics/metrics.ts';

const SYSTEM = 'urn:emr-bridge:service';
let fhir: RunningFhirServer;
let emr: EmrPort;

const metrics = createMetrics();
const emrFor = (baseUrl: string, timeoutMs = 5_000, withMetrics = false) =>
  createFhirEmr({
    baseUrl,
    identifierSystem: SYSTEM,
    timeoutMs,
    labReportTypeCodes: ['http://loinc.org|11502-2'],
    prescriptionTypeCodes: ['http://loinc.org|57833-6'],
    auth: { mode: 'none' },
    maxContentBytes: 1024 * 1024,
    clock: createManualClock(),
    logger: silentLogger(),
    ...(withMetrics ? { metrics } : {}),
  });

beforeAll(async () => {
  fhir = await startFhirServer({ logger: silentLogger() });
  emr = emrFor(fhir.baseUrl, 5_000, true);
});
afterAll(async () => {
  await emr.close();
  await fhir.close();
});

const get = async <T>(path: string) => (await (await fetch(`${fhir.baseUrl}/${path}`)).json()) as T;

async function appointmentInput(overrides: Partial<AppointmentInput> = {}): Promise<AppointmentInput> {
  const patient = await emr.ensurePatient({ serviceId: 'pat_a', name: 'Test Patient', phone: '+15550000001' });
  const doctor = await emr.ensurePractitioner({ serviceId: 'doc_a', name: 'Dr Test' });
  const location = await emr.ensureLocation({ serviceId: 'loc_a', name: 'Room 1' });
  return {
    serviceId: 'apt_a',
    status: 'Approved',
    startsAt: '2026-02-01T09:00:00.000Z',
    startsAtLocal: '2026-02-01T10:00:00.000+01:00',
    mode: 'Offline',
    token: 'A-1',
    notes: 'note',
    payment: { type: 'Partial', amountPaid: 10, balanceDue: 5, currency: 'EUR', payAtClinic: true },
    patientId: patient.id,
    practitionerId: doctor.id,
    locationId: location.id,
    occurredAt: '2026-01-15T10:00:00.000Z',
    ...overrides,
  };
}

describe('createFhirEmr', () => {
  it('creates one Patient per serviceId, even when claimed concurrently and again later', async () => {
    const input = { serviceId: 'pat_concurrent', name: 'Test Patient', phone: '+15550000009' };
    const results = await Promise.all([emr.ensurePatient(input), emr.ensurePatient(input)]);
    const again = await emr.ensurePatient(input);
    expect(new Set([...results, again].map((r) => r.id)).size).toBe(1);
    expect(again.created).toBe(false);
    const bundle = await get<{ total: number }>(`Patient?identifier=${SYSTEM}|pat_concurrent`);
    expect(bundle.total).toBe(1);
    await emr.updatePatient(again.id, { ...input, name: 'Renamed Patient' });
    const updated = await get<{ name: { text: string }[]; identifier: { value: string }[] }>(`Patient/${again.id}`);
    expect(updated.name[0]!.text).toBe('Renamed Patient');
    expect(updated.identifier[0]!.value).toBe('pat_concurrent');
  });

  it('links a patient the EMR already had, and never changes its name, birth date or phone from a snapshot', async () => {
    const mrn = { system: 'urn:hospital:mrn', value: 'MRN-1' };
    const created = await fetch(`${fhir.baseUrl}/Patient`, {
      method: 'POST',
      headers: { 'content-type': 'application/fhir+json' },
      body: JSON.stringify({
        resourceType: 'Patient',
        identifier: [mrn],
        birthDate: '1980-05-05',
        name: [{ given: ['Ada'], family: 'Example' }],
        telecom: [
          { system: 'email', value: 'ada@example.org' },
          { system: 'phone', value: '+15550000100' },
        ],
      }),
    });
    const { id } = (await created.json()) as { id: string };
    type P = {
      meta: { versionId: string };
      birthDate: string;
      name: { text?: string; given?: string[] }[];
      identifier: { system: string; value: string }[];
      telecom: { system: string; value: string }[];
    };
    await emr.linkPatient(id, 'pat_linked');
    await emr.linkPatient(id, 'pat_linked');
    const linked = await get<P>(`Patient/${id}`);
    expect(linked.identifier).toEqual([mrn, { system: SYSTEM, value: 'pat_linked' }]);
    expect((await emr.ensurePatient({ serviceId: 'pat_linked', name: 'Ada Example', phone: '+15550000100' })).id).toBe(id);
    // The same name and phone as the EMR has: nothing to write, nothing differs.
    expect(await emr.updatePatient(id, { serviceId: 'pat_linked', name: 'Ada Example', phone: '+15550000100' })).toEqual({ differences: [] });
    expect((await get<P>(`Patient/${id}`)).meta.versionId).toBe(linked.meta.versionId);
    // Another name and phone: reported, and the EMR's record stays exactly as it was.
    expect(await emr.updatePatient(id, { serviceId: 'pat_linked', name: 'Ada Renamed', phone: '+15550000200' })).toEqual({ differences: ['name', 'phone'] });
    const after = await get<P>(`Patient/${id}`);
    expect(after.meta.versionId).toBe(linked.meta.versionId);
    expect(after).toMatchObject({ birthDate: '1980-05-05', name: [{ given: ['Ada'] }], telecom: linked.telecom });
    const counted = await metrics.registry.getSingleMetricAsString('emr_bridge_patient_snapshot_differences_total');
    expect(counted).toMatch(/\{field="name"\} 1/);
    expect(counted).toMatch(/\{field="phone"\} 1/);
  });

  it('applies a newer snapshot to a patient it created, keeping what the EMR added to it', async () => {
    const { id } = await emr.ensurePatient({ serviceId: 'pat_own', name: 'Own Patient', phone: '+15550000300' });
    type P = { birthDate?: string; name: { text?: string }[]; extension?: { url: string }[]; telecom: { value: string }[] };
    const made = await get<P & Record<string, unknown>>(`Patient/${id}`);
    // A clerk adds a birth date (a read-modify-write, as an EMR would).
    await fetch(`${fhir.baseUrl}/Patient/${id}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/fhir+json' },
      body: JSON.stringify({ ...made, birthDate: '1990-01-01' }),
    });
    expect(await emr.updatePatient(id, { serviceId: 'pat_own', name: 'Own Renamed', phone: '+15550000301' })).toEqual({ differences: [] });
    const updated = await get<P>(`Patient/${id}`);
    expect(updated).toMatchObject({ birthDate: '1990-01-01', name: [{ text: 'Own Renamed' }] });
    expect(updated.telecom[0]!.value).toBe('+15550000301');
    expect(updated.extension?.map((e) => e.url)).toContain('https://emr-bridge.dev/fhir/StructureDefinition/record-origin');
  });

  it("finds the EMR's own patient by the service's externalId, and claims a new one only when that id cannot be this patient", async () => {
    const post = async (body: Record<string, unknown>) =>
      (
        (await (
          await fetch(`${fhir.baseUrl}/Patient`, {
            method: 'POST',
            headers: { 'content-type': 'application/fhir+json' },
            body: JSON.stringify({ resourceType: 'Patient', ...body }),
          })
        ).json()) as { id: string }
      ).id;
    const own = await post({ name: [{ text: 'Clerk Made' }], telecom: [{ system: 'phone', value: '+15550000400' }] });
    const adopted = await emr.ensurePatient({ serviceId: 'pat_by_ext', externalId: own, name: 'Clerk Made', phone: '+15550000400' });
    expect(adopted).toEqual({ id: own, created: false });
    expect((await get<{ identifier: { value: string }[] }>(`Patient/${own}`)).identifier).toEqual([{ system: SYSTEM, value: 'pat_by_ext' }]);
    expect(await emr.ensurePatient({ serviceId: 'pat_by_ext', externalId: own, name: 'Clerk Made', phone: '+15550000400' })).toEqual({
      id: own,
      created: false,
    });
    // Already standing for another service patient: never merged; a record of its own is claimed.
    const taken = await emr.ensurePatient({ serviceId: 'pat_other', externalId: own, name: 'Someone Else', phone: '+15550000400' });
    expect(taken.created).toBe(true);
    expect(taken.id).not.toBe(own);
    // No such record in the EMR: claimed as usual.
    expect((await emr.ensurePatient({ serviceId: 'pat_gone', externalId: 'no-such-patient', name: 'Gone', phone: '+15550000401' })).created).toBe(true);
    expect((await get<{ total: number }>(`Patient?identifier=${SYSTEM}|pat_by_ext`)).total).toBe(1);
  });

  it('maps appointment statuses and keeps an unknown one in an extension', async () => {
    const apt = await emr.ensureAppointment(await appointmentInput());
    let stored = await get<{ status: string; extension: { url: string; valueString?: string }[]; participant: unknown[] }>(`Appointment/${apt.id}`);
    expect(stored.status).toBe('booked');
    expect(stored.participant).toHaveLength(3);
    await emr.updateAppointment(apt.id, await appointmentInput({ status: 'Tentative', startsAt: '2026-02-02T09:00:00.000Z' }));
    stored = await get(`Appointment/${apt.id}`);
    expect(stored.status).toBe('proposed');
    expect(stored.extension.find((e) => e.url.endsWith('/service-status'))?.valueString).toBe('Tentative');
    for (const [service, fhirStatus] of [
      ['Cancelled', 'cancelled'],
      ['Completed', 'fulfilled'],
      ['NoShow', 'noshow'],
      ['Pending', 'pending'],
    ]) {
      await emr.updateAppointment(apt.id, await appointmentInput({ status: service! }));
      expect((await get<{ status: string }>(`Appointment/${apt.id}`)).status).toBe(fhirStatus);
    }
  });

  it('lists lab reports and prescriptions changed since a watermark, with their patient', async () => {
    const patient = await emr.ensurePatient({ serviceId: 'pat_doc', name: 'Doc Patient', phone: '+15550000010' });
    const post = (code: string, title: string) =>
      fetch(`${fhir.baseUrl}/DocumentReference`, {
        method: 'POST',
        headers: { 'content-type': 'application/fhir+json' },
        body: JSON.stringify({
          resourceType: 'DocumentReference',
          status: 'current',
          type: { coding: [{ system: 'http://loinc.org', code }] },
          subject: { reference: `Patient/${patient.id}` },
          description: `label ${title}`,
          content: [{ attachment: { contentType: 'application/pdf', title, data: Buffer.from('%PDF-1.4').toString('base64') } }],
        }),
      });
    await post('11502-2', 'lab.pdf');
    await post('57833-6', 'rx.pdf');
    await post('00000-0', 'other.pdf');
    const first = await emr.listDocumentsChangedSince(undefined);
    expect(first.documents.map((d) => d.documentType).sort()).toEqual(['lab_report', 'prescription']);
    const lab = first.documents.find((d) => d.documentType === 'lab_report')!;
    expect(lab).toMatchObject({ filename: 'lab.pdf', label: 'label lab.pdf', patient: { id: patient.id, serviceId: 'pat_doc', phone: '+15550000010' } });
    const later = await emr.listDocumentsChangedSince('2999-01-01T00:00:00.000Z');
    expect(later.documents).toHaveLength(0);
  });

  it('records a document outcome as one Communication, updated in place', async () => {
    const base = { documentId: 'doc-1', documentType: 'lab_report' as const, occurredAt: '2026-01-15T10:00:00.000Z' };
    await emr.recordDocumentOutcome({ ...base, status: 'HELD', statusReason: 'quiet hours', releaseAfter: '2026-01-16T07:00:00.000Z' });
    await emr.recordDocumentOutcome({ ...base, status: 'SENT', sentAt: '2026-01-16T07:00:01.000Z' });
    await emr.recordDocumentOutcome({ ...base, status: 'SENT', sentAt: '2026-01-16T07:00:01.000Z' });
    const bundle = await get<{ total: number; entry: { resource: { status: string; sent: string } }[] }>(
      `Communication?identifier=${SYSTEM}|document-outcome:doc-1`,
    );
    expect(bundle.total).toBe(1);
    expect(bundle.entry[0]!.resource).toMatchObject({ status: 'completed', sent: '2026-01-16T07:00:01.000Z' });
  });

  it('fails retryably when the EMR is unreachable and permanently when it refuses', async () => {
    const down = emrFor('http://127.0.0.1:9', 1_000);
    const err = await down.ensurePatient({ serviceId: 'x', name: 'x', phone: '+15550000011' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).retryable).toBe(true);
    await down.close();
    const http = createFhirHttp({ baseUrl: fhir.baseUrl, timeoutMs: 5_000, auth: { mode: 'none' }, clock: createManualClock(), maxContentBytes: 1024 });
    const refused = await http.call('GET', 'Patient/does-not-exist').catch((e: unknown) => e);
    await http.close();
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('emr_rejected');
    expect((refused as AppError).retryable).toBe(false);
  });
});
