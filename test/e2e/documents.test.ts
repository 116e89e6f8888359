// End to end for documents: the adapter's outbox sends to the real simulator, follows each document to
// its final status (by event and by polling), delivers exactly once through faults, and writes the
// status back to the real FHIR server.
import { afterEach, describe, expect, it } from 'vitest';
import { PDF } from '../support/simulator-fixture.ts';
import { emrPatient, labReportDocument } from '../support/fhir-builders.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';

let s: Stack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const NO_QUIET_HOURS = { timeZone: 'UTC', quietHours: { start: '00:00', end: '00:00' } };
let n = 0;
const doc = (documentType: 'lab_report' | 'prescription', o: Record<string, unknown> = {}) => ({
  documentType,
  externalId: `doc-${Date.now()}-${n++}`,
  patientPhone: `+1555020${String(n).padStart(4, '0')}`,
  patientName: 'Synthetic Patient',
  label: documentType === 'lab_report' ? 'Full blood count' : 'Amoxicillin 500 mg',
  file: { base64: PDF.toString('base64'), filename: 'document.pdf' },
  ...o,
});

type View = { document: { status: string; sentAt?: string; releaseAfter?: string; serviceId?: string; errorCode?: string } };
const statusOf = async (st: Stack, externalId: string) => (await st.admin<View>('GET', `/documents/${externalId}`)).body.document;
const until = (st: Stack, externalId: string, status: string, timeoutMs = 15_000) =>
  waitFor(async () => ((await statusOf(st, externalId))?.status === status ? statusOf(st, externalId) : undefined), timeoutMs);
const messagesTo = async (st: Stack, phone: string) => (await st.simGet<{ text: string }[]>(`/_sim/messages?phone=${encodeURIComponent(phone)}`)).body;

describe('documents from the adapter to the patient', () => {
  it('a lab report is SENT and exactly one message reaches the patient', async () => {
    s = await startStack({ clinic: NO_QUIET_HOURS });
    const d = doc('lab_report');
    expect((await s.admin('POST', '/documents', d)).status).toBe(202);
    expect((await s.admin('POST', '/documents', d)).status).toBe(200);
    const sent = await until(s, d.externalId, 'SENT');
    expect(sent.sentAt).toMatch(/Z$/);
    const m = await messagesTo(s, d.patientPhone);
    expect(m).toHaveLength(1);
    expect(m[0]!.text).toContain('Full blood count');
    const metrics = await (await fetch(`${s.adapter.url}/metrics`)).text();
    expect(metrics).toMatch(/emr_bridge_outbox_documents\{status="SENT"\} 1/);
  }, 30_000);

  it('a prescription is HELD, released by the clinic, and the new status arrives by event', async () => {
    s = await startStack({ clinic: NO_QUIET_HOURS, settings: { PUSHER_HELD_POLL_SECONDS: '3600' } });
    const d = doc('prescription');
    await s.admin('POST', '/documents', d);
    const held = await until(s, d.externalId, 'HELD');
    await s.simPost(`/_sim/documents/${held.serviceId}/release`);
    await until(s, d.externalId, 'SENT');
    expect(await messagesTo(s, d.patientPhone)).toHaveLength(1);
  }, 30_000);

  it('… and by polling when no document events are subscribed', async () => {
    s = await startStack({ clinic: NO_QUIET_HOURS, eventTypes: ['appointment.created'], settings: { PUSHER_HELD_POLL_SECONDS: '1' } });
    const d = doc('prescription');
    await s.admin('POST', '/documents', d);
    const held = await until(s, d.externalId, 'HELD');
    await s.simPost(`/_sim/documents/${held.serviceId}/release`);
    await until(s, d.externalId, 'SENT');
  }, 30_000);

  it('a lab report inside quiet hours is HELD and delivered once the clock passes releaseAfter', async () => {
    const hour = new Date().getUTCHours();
    const hh = (h: number) => `${String((h + 24) % 24).padStart(2, '0')}:00`;
    s = await startStack({ clinic: { timeZone: 'UTC', quietHours: { start: hh(hour - 1), end: hh(hour + 2) } } });
    const d = doc('lab_report');
    await s.admin('POST', '/documents', d);
    const held = await until(s, d.externalId, 'HELD');
    expect(Date.parse(held.releaseAfter!)).toBeGreaterThan(Date.now());
    expect(await messagesTo(s, d.patientPhone)).toHaveLength(0);
    await s.simPost('/_sim/clock/advance', { seconds: 3 * 3600 });
    const sent = await until(s, d.externalId, 'SENT');
    expect(sent.sentAt).toBe(held.releaseAfter);
    expect(await messagesTo(s, d.patientPhone)).toHaveLength(1);
  }, 30_000);

  it('a sandbox key gives SUPPRESSED and no message', async () => {
    s = await startStack({ clinic: NO_QUIET_HOURS, keyMode: 'sandbox' });
    const d = doc('lab_report');
    await s.admin('POST', '/documents', d);
    await until(s, d.externalId, 'SUPPRESSED');
    expect(await messagesTo(s, d.patientPhone)).toHaveLength(0);
  }, 30_000);

  it.each([
    ['5xx', { integration: { status: 503, count: 3 } }],
    ['429 with Retry-After', { integration: { status: 429, count: 2, retryAfterSeconds: 1 } }],
    ['too slowly (past the timeout)', { integration: { delayMs: 1500 } }],
  ])(
    'with the service answering %s, exactly one message is delivered in the end',
    async (_l, faults) => {
      s = await startStack({ clinic: NO_QUIET_HOURS, settings: { SERVICE_TIMEOUT_MS: '500' } });
      await s.simPost('/_sim/faults', faults);
      const d = doc('lab_report');
      await s.admin('POST', '/documents', d);
      if ('delayMs' in faults.integration) {
        // The slow first attempt times out at the adapter while the service still delivers it.
        await waitFor(async () => (await messagesTo(s!, d.patientPhone)).length === 1, 10_000);
        await s.simPost('/_sim/faults', {});
      }
      await until(s, d.externalId, 'SENT');
      expect(await messagesTo(s, d.patientPhone)).toHaveLength(1);
    },
    30_000,
  );

  it.each([
    ['a GIF', { file: { base64: Buffer.from('GIF89a-not-a-pdf').toString('base64'), filename: 'x.pdf' } }, 415, 'unsupported_file_type'],
    ['a file over 15 MB', { file: { base64: Buffer.alloc(15 * 1024 * 1024 + 1, 0x25).toString('base64'), filename: 'big.pdf' } }, 413, 'file_too_large'],
    ['an http URL', { file: { url: 'http://lab.example/r.pdf', filename: 'r.pdf' } }, 422, 'file_url_rejected'],
    ['no patient identification', { patientPhone: undefined, patientName: undefined }, 422, 'patient_unresolvable'],
  ])(
    'rejects %s locally with its reason, sending nothing',
    async (_l, overrides, status, code) => {
      s = await startStack({ clinic: NO_QUIET_HOURS });
      const res = await s.admin<{ error: { code: string; message: string } }>('POST', '/documents', doc('lab_report', overrides));
      expect(res.status).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect((await s.simGet<unknown[]>('/_sim/messages')).body).toHaveLength(0);
    },
    30_000,
  );

  it('sends a DocumentReference found in FHIR and records its final status back in FHIR', async () => {
    s = await startStack({ clinic: NO_QUIET_HOURS });
    const patient = await s.fhirCreate(emrPatient('+15550309999'));
    const dr = await s.fhirCreate(labReportDocument(patient.id, 'Lipid panel'));
    await until(s, dr.id, 'SENT');
    expect(await messagesTo(s, '+15550309999')).toHaveLength(1);
    const outcome = await waitFor(async () => {
      const c = await s!.fhirSearch<{ status: string; about: { reference: string }[] }>(
        `Communication?identifier=${encodeURIComponent(`urn:emr-bridge:service|document-outcome:${dr.id}`)}`,
      );
      return c[0]?.status === 'completed' ? c[0] : undefined;
    });
    expect(outcome.about[0]!.reference).toBe(`DocumentReference/${dr.id}`);
  }, 30_000);

  it('reads an attachment URL on the FHIR server signed in, and rejects one on another origin with the reason written back', async () => {
    s = await startStack({ clinic: NO_QUIET_HOURS });
    const patient = await s.fhirCreate({
      resourceType: 'Patient',
      name: [{ text: 'Synthetic Patient' }],
      telecom: [{ system: 'phone', value: '+15550307777' }],
    });
    const binary = await s.fhirCreate({ resourceType: 'Binary', contentType: 'application/pdf', data: PDF.toString('base64') });
    const withUrl = (url: string, description: string) =>
      s!.fhirCreate({
        resourceType: 'DocumentReference',
        status: 'current',
        type: { coding: [{ system: 'http://loinc.org', code: '11502-2' }] },
        subject: { reference: `Patient/${patient.id}` },
        description,
        content: [{ attachment: { contentType: 'application/pdf', title: 'result.pdf', url } }],
      });
    const own = await withUrl(`Binary/${binary.id}`, 'Ferritin');
    const foreign = await withUrl('https://files.example.org/result.pdf', 'Vitamin D');

    await until(s, own.id, 'SENT');
    const [message] = await messagesTo(s, '+15550307777');
    expect(message).toBeDefined();
    const rejected = await until(s, foreign.id, 'REJECTED');
    expect(rejected.errorCode).toBe('document_content_refused');
    const outcome = await waitFor(async () => {
      const c = await s!.fhirSearch<{ status: string; statusReason?: { text: string } }>(
        `Communication?identifier=${encodeURIComponent(`urn:emr-bridge:service|document-outcome:${foreign.id}`)}`,
      );
      return c[0]?.status === 'not-done' ? c[0] : undefined;
    });
    expect(outcome.statusReason?.text).toContain('another origin');
    expect(await messagesTo(s, '+15550307777')).toHaveLength(1);
  }, 30_000);

  it("links the service's new patient to the EMR patient the document was for, instead of claiming a second one", async () => {
    s = await startStack({ clinic: NO_QUIET_HOURS });
    const mrn = { system: 'urn:hospital:mrn', value: 'MRN-000417' };
    const patient = await s.fhirCreate(
      emrPatient('+15550308888', { identifier: [mrn], birthDate: '1970-01-01', name: [{ given: ['Synthetic'], family: 'Patient' }] }),
    );
    const dr = await s.fhirCreate(labReportDocument(patient.id, 'HbA1c'));
    await until(s, dr.id, 'SENT');
    type FhirPatient = { id: string; birthDate?: string; identifier?: { system: string; value: string }[] };
    // The service's patient.created for its new patient is applied to the EMR patient, not as a new one.
    const linked = await waitFor(async () => {
      const all = await s!.fhirSearch<FhirPatient>('Patient?_count=50');
      const serviceId = all[0]?.identifier?.find((i) => i.system === 'urn:emr-bridge:service')?.value;
      return all.length === 1 && serviceId ? { all, serviceId } : undefined;
    });
    expect(linked.all[0]).toMatchObject({ id: patient.id, birthDate: '1970-01-01' });
    expect(linked.all[0]!.identifier).toContainEqual(mrn);
    // The link reached the service: its next appointment for this patient carries the EMR id.
    await waitFor(async () => {
      const a = await s!.simPost<{ patient: { externalId: string | null } }>('/_sim/appointments', {
        clinicId: s!.clinicId,
        patient: { serviceId: linked.serviceId },
      });
      return a.body.patient.externalId === patient.id || undefined;
    });
    const appointments = await waitFor(async () => {
      const found = await s!.fhirSearch<{ participant: { actor: { reference: string } }[] }>('Appointment?_count=50');
      return found.length ? found : undefined;
    });
    expect(appointments[0]!.participant.map((p) => p.actor.reference)).toContain(`Patient/${patient.id}`);
    expect(await s.fhirSearch('Patient?_count=50')).toHaveLength(1);
  }, 30_000);
});
