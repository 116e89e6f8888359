// End to end with an HL7 v2 EMR: the real simulator, the bundled HL7 EMR over loopback MLLP and the real adapter
// (EMR_PROTOCOL=hl7v2), as test/e2e/emr-sync.test.ts and documents.test.ts run the FHIR one. Appointments
// created, rescheduled, completed and cancelled reach the EMR as SIU; patients as ADT; the EMR's feeds name its
// ids and the mappings reach the service; duplicates and out-of-order deliveries end in one record each in its
// newest state; a document the EMR files reaches the patient once; an AR outage is ridden out and an AE refusal
// becomes a dead letter holding the EMR's ERR text.
import { afterEach, describe, expect, it } from 'vitest';
import { type Hl7Stack, startHl7Stack } from '../support/hl7-stack.ts';
import { waitFor } from '../support/wait.ts';

interface Snapshot {
  serviceId: string;
  appointment: { externalId: string | null };
  patient: { serviceId: string; externalId: string | null; phone: string; name: string };
}

const NO_QUIET_HOURS = { timeZone: 'UTC', quietHours: { start: '00:00', end: '00:00' } };

let s: Hl7Stack | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const appointmentIn = (
  st: Hl7Stack,
  serviceId: string,
  ok: (a: ReturnType<Hl7Stack['emr']['appointments']>[number]) => boolean = () => true,
  timeoutMs = 15_000,
) => waitFor(() => st.emr.appointments().find((a) => a.serviceId === serviceId && ok(a)), timeoutMs);

describe('an adapter beside an HL7 v2 EMR', () => {
  it('books a new appointment once with its patient, and the EMR ids it names reach the service', async () => {
    s = await startHl7Stack();
    const created = (await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId })).body;
    const apt = await appointmentIn(s, created.serviceId);
    const patient = await waitFor(() => s!.emr.patients().find((p) => p.serviceId === created.patient.serviceId));
    // The patient's A28 came before the S12 that names it.
    const types = s.emr.received().map((m) => m.type);
    expect(types.indexOf('ADT^A28')).toBeLessThan(types.indexOf('SIU^S12'));
    const mapped = await waitFor(async () => {
      const snap = (await s!.simGet<Snapshot>(`/_sim/appointments/${created.serviceId}`)).body;
      return snap.appointment.externalId && snap.patient.externalId ? snap : undefined;
    });
    expect(mapped.appointment.externalId).toBe(apt.fillerId);
    expect(mapped.patient.externalId).toBe(patient.mrn);
    expect(s.emr.appointments().filter((a) => a.serviceId === created.serviceId)).toHaveLength(1);
    expect(s.emr.patients().filter((p) => p.serviceId === created.patient.serviceId)).toHaveLength(1);
  }, 30_000);

  it('reflects reschedule, completion, no-show and cancellation', async () => {
    s = await startHl7Stack();
    const a = (await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId })).body.serviceId;
    await appointmentIn(s, a);
    await s.simPost(`/_sim/appointments/${a}/reschedule`, { startsAt: '2027-05-05T09:30:00.000Z' });
    await appointmentIn(s, a, (x) => x.start.startsWith('20270505'));
    await s.simPost(`/_sim/appointments/${a}/complete`);
    await appointmentIn(s, a, (x) => x.status === 'Complete');
    const b = (await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId })).body.serviceId;
    await s.simPost(`/_sim/appointments/${b}/no-show`);
    await appointmentIn(s, b, (x) => x.status === 'Noshow');
    const c = (await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId })).body.serviceId;
    await s.simPost(`/_sim/appointments/${c}/cancel`);
    await appointmentIn(s, c, (x) => x.cancelled);
    const kinds = new Set(s.emr.received().map((m) => m.type));
    for (const t of ['SIU^S12', 'SIU^S13', 'SIU^S14', 'SIU^S15']) expect(kinds).toContain(t);
  }, 40_000);

  it('ends with one record per entity in its newest state under duplicate and out-of-order delivery', async () => {
    s = await startHl7Stack();
    await s.simPost('/_sim/faults', { duplicateDeliveries: true, outOfOrder: true });
    const patient = (await s.simPost<{ serviceId: string }>('/_sim/patients', { clinicId: s.clinicId })).body;
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const a = (await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId, patient: { serviceId: patient.serviceId } })).body.serviceId;
      ids.push(a);
      await s.simPost(`/_sim/appointments/${a}/reschedule`, { startsAt: `2027-06-0${i + 1}T10:00:00.000Z` });
      await s.simPost(`/_sim/appointments/${a}/${i % 2 ? 'cancel' : 'complete'}`);
    }
    for (const [i, a] of ids.entries())
      await appointmentIn(s, a, (x) => (i % 2 ? x.cancelled : x.status === 'Complete') && x.start.startsWith(`2027060${i + 1}`), 25_000);
    expect(s.emr.patients().filter((p) => p.serviceId === patient.serviceId)).toHaveLength(1);
    expect(s.emr.appointments()).toHaveLength(4);
  }, 50_000);

  it('registers a new patient (patient.created) and posts its MRN back', async () => {
    s = await startHl7Stack();
    const patient = (await s.simPost<{ serviceId: string }>('/_sim/patients', { clinicId: s.clinicId })).body;
    const held = await waitFor(() => s!.emr.patients().find((p) => p.serviceId === patient.serviceId));
    await waitFor(async () => {
      const mappings = (
        await s!.admin<{ mappings: { entityType: string; emrId: string; posted: boolean }[] }>('GET', `/mappings?serviceId=${patient.serviceId}`)
      ).body.mappings;
      return mappings.some((m) => m.entityType === 'patient' && m.emrId === held.mrn && m.posted) || undefined;
    });
  }, 30_000);

  it('sends a document the EMR files to its patient exactly once, even when the EMR files it again', async () => {
    s = await startHl7Stack({ clinic: NO_QUIET_HOURS });
    const created = (await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId })).body;
    await waitFor(() => s!.emr.patients().find((p) => p.serviceId === created.patient.serviceId));
    const pdf = Buffer.from('%PDF-1.4\n% an HL7 lab report\n%%EOF\n');
    const documentId = s.emr.fileDocument({ patientServiceId: created.patient.serviceId, documentType: 'lab_report', label: 'Lipid panel', pdf });
    s.emr.fileDocument({ patientServiceId: created.patient.serviceId, documentType: 'lab_report', label: 'Lipid panel', pdf, documentId });
    await waitFor(async () =>
      (await s!.admin<{ document?: { status: string } }>('GET', `/documents/${documentId}`)).body.document?.status === 'SENT' ? true : undefined,
    );
    await waitFor(() => (s!.emr.pendingNotifications() === 0 ? true : undefined));
    const messages = (await s.simGet<{ text: string }[]>(`/_sim/messages?phone=${encodeURIComponent(created.patient.phone)}`)).body;
    expect(messages).toHaveLength(1);
    expect(messages[0]!.text).toContain('Lipid panel');
  }, 30_000);

  it('rides out an EMR answering AR, and parks an event the EMR refuses (AE) as a dead letter with its ERR text', async () => {
    s = await startHl7Stack();
    s.emr.setFault({ mode: 'AR', count: 3 });
    const a = (await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId })).body.serviceId;
    await appointmentIn(s, a, () => true, 20_000);
    expect((await s.admin<{ events: unknown[] }>('GET', '/dead-letters')).body.events).toHaveLength(0);

    // The next message the EMR takes is refused: the first event to send one is parked, the rest go on.
    s.emr.setFault({ mode: 'AE', count: 1 });
    await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId });
    const dead = await waitFor(async () => {
      const events = (await s!.admin<{ events: { lastError: string | null }[] }>('GET', '/dead-letters')).body.events;
      return events.length ? events : undefined;
    }, 20_000);
    expect(dead).toHaveLength(1);
    expect(dead[0]!.lastError).toMatch(/the EMR refused (ADT|SIU)\^\w+ for \w+ \S+ \(AE\)/);
    expect(s.emr.received().filter((m) => m.ack === 'AE')).toHaveLength(1);
  }, 40_000);

  it('waits out an EMR that cannot be reached as an incident, with no dead letter, and applies once it is back', async () => {
    s = await startHl7Stack();
    await s.stopEmr();
    const a = (await s.simPost<Snapshot>('/_sim/appointments', { clinicId: s.clinicId })).body.serviceId;
    const status = await waitFor(async () => {
      const emr = (await s!.admin<{ components: { name: string; ok: boolean; reason: string | null }[] }>('GET', '/status')).body.components.find(
        (c) => c.name === 'emr',
      );
      return emr && !emr.ok ? emr : undefined;
    });
    expect(status.reason).toMatch(/^emr_unreachable: /);
    expect((await s.admin<{ events: unknown[] }>('GET', '/dead-letters')).body.events).toHaveLength(0);
    await s.startEmr();
    await appointmentIn(s, a, () => true, 30_000);
    expect((await s.admin<{ events: unknown[] }>('GET', '/dead-letters')).body.events).toHaveLength(0);
  }, 50_000);
});
