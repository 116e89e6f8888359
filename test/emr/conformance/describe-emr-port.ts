// The behaviour every EmrPort must have, as one reusable vitest suite: find-or-create with one record per
// serviceId (also when many claims run at once), whose patient it is (the EMR's own is adopted and never
// rewritten, the adapter's takes snapshots), an appointment claimed with its records in one call where the
// port has claimAppointment and the EMR allows it, appointment updates and cancellation, documents listed by
// watermark and read (inline, at the EMR's URL, refused elsewhere), outcomes written back once, ping, and
// the EmrError class of each failure (outage, refusal of the adapter, refusal of one call).
//
// Run it against an adapter with one line in a test file (test/emr/memory-conformance.test.ts and
// test/emr/fhir-conformance.test.ts are the two examples):
//
//   describeEmrPort('my EMR', async () => myHarness());
//
// The suite calls makeEmr once (beforeAll) and close() once (afterAll). Every id it uses carries a fresh
// suffix, so it can run again against an EMR that keeps data between runs.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DocumentType } from '../../../src/contract/events.ts';
import { EmrError, type EmrErrorCode } from '../../../src/emr/errors.ts';
import type { AppointmentClaim, AppointmentInput, DocumentOutcome, EmrDocument, EmrPort } from '../../../src/emr/port.ts';

/** The kinds of record the port claims by the service's id. */
export type ClaimedKind = 'patient' | 'practitioner' | 'location' | 'appointment';

/** A patient as the EMR holds it. */
export interface HeldPatient {
  /** The name the EMR shows. */
  name: string;
  /** Every phone number the record carries. */
  phones: string[];
  /** The service's ids the record is marked with (by ensurePatient, adoption or linkPatient). */
  serviceIds: string[];
}

/** An appointment as the EMR holds it. */
export interface HeldAppointment {
  startsAt: string;
  /** Whether the EMR has it as cancelled. */
  cancelled: boolean;
  /** The service's status as the EMR keeps it (unknown values too). */
  serviceStatus: string;
}

/** One record of a document's outcome the EMR holds. */
export interface HeldOutcome {
  status: DocumentOutcome['status'];
  /** Changes whenever the EMR's record changes (FHIR: meta.versionId). */
  version: string;
}

/** A document to put in the EMR, for a patient it has. */
export interface DocumentSeed {
  patientId: string;
  documentType: DocumentType;
  label: string;
  filename: string;
  mimeType: string;
  bytes: Uint8Array;
  /** 'inline': the bytes in the document itself; 'url': at a URL on the EMR that readDocumentBytes reads. */
  content: 'inline' | 'url';
}

/** A port on the same EMR that fails as asked, and how to end that. */
export interface FailingEmr {
  emr: EmrPort;
  /** Ends the failure (the harness's main port works after it); closes a port made for it. */
  end(): Promise<void>;
}

/**
 * What the suite needs besides the port: to arrange what only the EMR's own people do (a patient a clerk
 * registered, a document a doctor signed), to read back what the port wrote, and to make it fail. Arranged
 * and read directly in the EMR, never through the port under test.
 */
export interface EmrHarness {
  /** The port under test. */
  emr: EmrPort;
  /** Registers a patient as the EMR's staff would (not the adapter's, marked with no service id); its EMR id. */
  addEmrPatient(patient: { name: string; phone: string }): Promise<string>;
  /** The patient with this EMR id; undefined when there is none. */
  readPatient(id: string): Promise<HeldPatient | undefined>;
  /** How many records of this kind carry the service's id. */
  countByServiceId(kind: ClaimedKind, serviceId: string): Promise<number>;
  /** The appointment with this EMR id; undefined when there is none. */
  readAppointment(id: string): Promise<HeldAppointment | undefined>;
  /** Puts a document in the EMR, waiting to go to its patient; its EMR id. */
  addDocument(seed: DocumentSeed): Promise<string>;
  /** Every outcome record the EMR holds for the document (empty when none). */
  readOutcomes(documentId: string): Promise<HeldOutcome[]>;
  /** A port that cannot reach the EMR (nothing answers: down, or a network failure). */
  unreachable(): Promise<FailingEmr>;
  /** A port the EMR refuses as a whole (its sign-in refused, or its registration revoked). */
  refusingAdapter(): Promise<FailingEmr>;
  /** Stops what makeEmr started. */
  close(): Promise<void>;
}

const PDF = new Uint8Array(Buffer.from('%PDF-1.4\n% a synthetic document for the EmrPort suite\n%%EOF\n'));

export function describeEmrPort(name: string, makeEmr: () => Promise<EmrHarness>): void {
  describe(`EmrPort conformance: ${name}`, () => {
    let h: EmrHarness;
    let emr: EmrPort;
    const run = randomBytes(4).toString('hex');
    let seq = 0;
    /** A serviceId of its own for each use. */
    const sid = (prefix: string) => `${prefix}_${run}_${++seq}`;
    const phone = () => `+1555${String(1_000_000 + ++seq).slice(-7)}`;

    beforeAll(async () => {
      h = await makeEmr();
      emr = h.emr;
    });
    afterAll(async () => h?.close());

    async function failure(p: Promise<unknown>): Promise<EmrError> {
      const err = await p.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, 'the call should have failed with an EmrError').toBeInstanceOf(EmrError);
      return err as EmrError;
    }

    async function participants() {
      const patient = await emr.ensurePatient({ serviceId: sid('pat'), name: 'Appointment Patient', phone: phone() });
      const practitioner = await emr.ensurePractitioner({ serviceId: sid('doc'), name: 'Dr Suite' });
      const location = await emr.ensureLocation({ serviceId: sid('loc'), name: 'Room 1' });
      return { patientId: patient.id, practitionerId: practitioner.id, locationId: location.id };
    }

    async function appointment(overrides: Partial<AppointmentInput> = {}): Promise<AppointmentInput> {
      return {
        serviceId: sid('apt'),
        status: 'Approved',
        startsAt: '2026-02-01T09:00:00.000Z',
        startsAtLocal: '2026-02-01T10:00:00.000+01:00',
        mode: 'Offline',
        token: 'A-1',
        notes: 'bring the referral',
        payment: { type: 'Partial', amountPaid: 10, balanceDue: 5, currency: 'EUR', payAtClinic: true },
        ...(await participants()),
        occurredAt: '2026-01-15T10:00:00.000Z',
        ...overrides,
      };
    }

    /** An appointment claim naming new records only (fresh serviceIds each time it is made). */
    function newClaim(): AppointmentClaim {
      return {
        patient: { serviceId: sid('pat'), name: 'Claimed Patient', phone: phone() },
        practitioner: { serviceId: sid('doc'), name: 'Dr Claimed' },
        location: { serviceId: sid('loc'), name: 'Claimed Room' },
        appointment: {
          serviceId: sid('apt'),
          status: 'Approved',
          startsAt: '2026-02-01T09:00:00.000Z',
          mode: 'Offline',
          token: 'A-2',
          notes: '',
          payment: { type: 'Full', amountPaid: 15, balanceDue: 0, currency: 'EUR', payAtClinic: false },
          occurredAt: '2026-01-15T10:00:00.000Z',
        },
      };
    }

    /** One call of each kind the port makes, for the failure checks: arranged on the working EMR first, so only the failure differs. */
    async function arrangeEveryCall(): Promise<(port: EmrPort) => [string, () => Promise<unknown>][]> {
      const patient = await emr.ensurePatient({ serviceId: sid('pat'), name: 'Failure Patient', phone: phone() });
      const apt = await appointment();
      const { id: aptId } = await emr.ensureAppointment(apt);
      // claimAppointment is checked where the port has it and this EMR takes it.
      const claims = (await emr.claimAppointment?.(newClaim())) !== undefined;
      const docId = await h.addDocument({
        patientId: patient.id,
        documentType: 'lab_report',
        label: 'CBC',
        filename: 'cbc.pdf',
        mimeType: 'application/pdf',
        bytes: PDF,
        content: 'url',
      });
      const doc = (await emr.listDocumentsChangedSince(undefined)).documents.find((d) => d.id === docId)!;
      return (port) => [
        ['ping', () => port.ping()],
        ['ensurePatient', () => port.ensurePatient({ serviceId: sid('pat'), name: 'Never Made', phone: phone() })],
        ['updatePatient', () => port.updatePatient(patient.id, { serviceId: 'unused', name: 'Never Renamed', phone: phone() })],
        ['linkPatient', () => port.linkPatient(patient.id, sid('pat'))],
        ['ensurePractitioner', () => port.ensurePractitioner({ serviceId: sid('doc'), name: 'Dr Never' })],
        ['ensureLocation', () => port.ensureLocation({ serviceId: sid('loc'), name: 'Never Room' })],
        ['ensureAppointment', () => port.ensureAppointment({ ...apt, serviceId: sid('apt') })],
        ...(claims ? ([['claimAppointment', () => port.claimAppointment!(newClaim())]] as [string, () => Promise<unknown>][]) : []),
        ['updateAppointment', () => port.updateAppointment(aptId, { ...apt, status: 'Cancelled' })],
        ['listDocumentsChangedSince', () => port.listDocumentsChangedSince(undefined)],
        ['readDocumentBytes', () => port.readDocumentBytes(doc)],
        [
          'recordDocumentOutcome',
          () => port.recordDocumentOutcome({ documentId: docId, documentType: 'lab_report', status: 'SENT', occurredAt: '2026-01-15T10:00:00.000Z' }),
        ],
      ];
    }

    async function expectEveryCallFails(makeFailing: () => Promise<FailingEmr>, code: EmrErrorCode, classes: { retryable: boolean; incident: boolean }) {
      const calls = await arrangeEveryCall();
      const failing = await makeFailing();
      try {
        for (const [method, call] of calls(failing.emr)) {
          const err = await failure(call());
          expect({ method, code: err.code, retryable: err.retryable, incident: err.incident }).toEqual({ method, code, ...classes });
        }
      } finally {
        await failing.end();
      }
      // Once the failure ends, the port works again.
      await expect(emr.ping()).resolves.toBeUndefined();
    }

    describe('find-or-create', () => {
      it('claims one record per serviceId for each kind, and finds that record when claimed again', async () => {
        const patient = { serviceId: sid('pat'), name: 'Once Patient', phone: phone() };
        const practitioner = { serviceId: sid('doc'), name: 'Dr Once' };
        const location = { serviceId: sid('loc'), name: 'Once Room' };
        const apt = await appointment();
        const claims: [ClaimedKind, string, () => ReturnType<EmrPort['ensurePatient']>][] = [
          ['patient', patient.serviceId, () => emr.ensurePatient(patient)],
          ['practitioner', practitioner.serviceId, () => emr.ensurePractitioner(practitioner)],
          ['location', location.serviceId, () => emr.ensureLocation(location)],
          ['appointment', apt.serviceId, () => emr.ensureAppointment(apt)],
        ];
        for (const [kind, serviceId, claim] of claims) {
          const first = await claim();
          expect({ kind, created: first.created, hasId: first.id.length > 0 }).toEqual({ kind, created: true, hasId: true });
          const again = await claim();
          expect({ kind, ...again }).toEqual({ kind, id: first.id, created: false });
          expect({ kind, count: await h.countByServiceId(kind, serviceId) }).toEqual({ kind, count: 1 });
        }
      });

      it('keeps records apart when many entities are claimed at once, one serviceId string shared by different kinds included', async () => {
        const shared = Array.from({ length: 6 }, () => sid('shared'));
        const claimAll = () =>
          Promise.all(
            shared.flatMap((s, i) => [
              emr.ensurePatient({ serviceId: s, name: `Concurrent Patient ${i}`, phone: `+1555700000${i}` }),
              emr.ensurePractitioner({ serviceId: s, name: `Dr Concurrent ${i}` }),
              emr.ensureLocation({ serviceId: s, name: `Concurrent Room ${i}` }),
            ]),
          );
        const first = await claimAll();
        expect(first.every((r) => r.created)).toBe(true);
        // Different kinds may share a serviceId string; each is its own record. Ids are only compared within a kind.
        for (let k = 0; k < 3; k++) expect(new Set(first.filter((_, i) => i % 3 === k).map((r) => r.id)).size).toBe(shared.length);
        const again = await claimAll();
        expect(again).toEqual(first.map((r) => ({ id: r.id, created: false })));
        for (const s of shared)
          for (const kind of ['patient', 'practitioner', 'location'] as const)
            expect({ kind, s, n: await h.countByServiceId(kind, s) }).toEqual({ kind, s, n: 1 });

        // Appointments over the same participants, claimed at once, then again.
        const [patientId, practitionerId, locationId] = first.slice(0, 3).map((r) => r.id) as [string, string, string];
        const inputs = await Promise.all(Array.from({ length: 6 }, () => appointment({ patientId, practitionerId, locationId })));
        const made = await Promise.all(inputs.map((a) => emr.ensureAppointment(a)));
        expect(made.every((r) => r.created)).toBe(true);
        expect(new Set(made.map((r) => r.id)).size).toBe(inputs.length);
        expect(await Promise.all(inputs.map((a) => emr.ensureAppointment(a)))).toEqual(made.map((r) => ({ id: r.id, created: false })));
      });
    });

    describe('an appointment claimed with its records in one call (claimAppointment, optional)', () => {
      /** The port's claimAppointment where it has one and the EMR takes it; undefined: the port claims one by one. */
      async function claimed(claim: AppointmentClaim) {
        return emr.claimAppointment ? emr.claimAppointment(claim) : undefined;
      }

      it('claims the appointment and every record it names at once, and finds the same ids (created: false) when asked again', async (ctx) => {
        const claim = newClaim();
        const first = await claimed(claim);
        if (!first) return ctx.skip();
        expect(Object.values(first).map((r) => r.created)).toEqual([true, true, true, true]);
        const again = await claimed(claim);
        expect(again).toEqual({
          patient: { id: first.patient.id, created: false },
          practitioner: { id: first.practitioner.id, created: false },
          location: { id: first.location.id, created: false },
          appointment: { id: first.appointment.id, created: false },
        });
        const serviceIds: [ClaimedKind, string][] = [
          ['patient', (claim.patient as { serviceId: string }).serviceId],
          ['practitioner', (claim.practitioner as { serviceId: string }).serviceId],
          ['location', (claim.location as { serviceId: string }).serviceId],
          ['appointment', claim.appointment.serviceId],
        ];
        for (const [kind, serviceId] of serviceIds) expect({ kind, n: await h.countByServiceId(kind, serviceId) }).toEqual({ kind, n: 1 });
        expect(await h.readAppointment(first.appointment.id)).toMatchObject({ cancelled: false, serviceStatus: 'Approved' });
        expect(await h.readPatient(first.patient.id)).toMatchObject({ name: 'Claimed Patient', serviceIds: [serviceIds[0]![1]] });
        // The same records as the one-by-one claims find.
        expect((await emr.ensurePractitioner(claim.practitioner as { serviceId: string; name: string })).id).toBe(first.practitioner.id);
      });

      it('names participants the caller knows by their ids, and finds those claimed one by one before', async (ctx) => {
        const known = await participants();
        const claim = newClaim();
        const practitioner = claim.practitioner as { serviceId: string; name: string };
        const before = await emr.ensurePractitioner(practitioner);
        const result = await claimed({ ...claim, patient: { id: known.patientId }, location: { id: known.locationId } });
        if (!result) return ctx.skip();
        expect(result.patient).toEqual({ id: known.patientId, created: false });
        expect(result.location).toEqual({ id: known.locationId, created: false });
        expect(result.practitioner).toEqual({ id: before.id, created: false });
        expect(result.appointment.created).toBe(true);
        expect(await h.countByServiceId('practitioner', practitioner.serviceId)).toBe(1);
        expect(await h.countByServiceId('appointment', claim.appointment.serviceId)).toBe(1);
      });
    });

    describe('whose patient it is', () => {
      it("adopts the EMR's own patient the service knows by its externalId, marking it instead of making another", async () => {
        const ownPhone = phone();
        const own = await h.addEmrPatient({ name: 'Clerk Registered', phone: ownPhone });
        const serviceId = sid('pat');
        const claim = { serviceId, externalId: own, name: 'Clerk Registered', phone: ownPhone };
        expect(await emr.ensurePatient(claim)).toEqual({ id: own, created: false });
        expect(await emr.ensurePatient(claim)).toEqual({ id: own, created: false });
        expect(await h.readPatient(own)).toEqual({ name: 'Clerk Registered', phones: [ownPhone], serviceIds: [serviceId] });
        expect(await h.countByServiceId('patient', serviceId)).toBe(1);
      });

      it('claims a patient of its own when the externalId names no patient, or one that stands for another service patient', async () => {
        const own = await h.addEmrPatient({ name: 'Taken Patient', phone: phone() });
        const first = sid('pat');
        expect((await emr.ensurePatient({ serviceId: first, externalId: own, name: 'Taken Patient', phone: phone() })).id).toBe(own);
        const other = sid('pat');
        const taken = await emr.ensurePatient({ serviceId: other, externalId: own, name: 'Someone Else', phone: phone() });
        expect(taken.created).toBe(true);
        expect(taken.id).not.toBe(own);
        expect((await h.readPatient(own))?.serviceIds).toEqual([first]);
        const gone = await emr.ensurePatient({ serviceId: sid('pat'), externalId: `no-such-patient-${run}`, name: 'Nobody Known', phone: phone() });
        expect(gone.created).toBe(true);
      });

      it('applies a newer snapshot whole to a patient it created, with no differences to report', async () => {
        const serviceId = sid('pat');
        const { id } = await emr.ensurePatient({ serviceId, name: 'Made Here', phone: phone() });
        const newPhone = phone();
        expect(await emr.updatePatient(id, { serviceId, name: 'Renamed Here', phone: newPhone })).toEqual({ differences: [] });
        const held = await h.readPatient(id);
        expect(held).toMatchObject({ name: 'Renamed Here', serviceIds: [serviceId] });
        expect(held!.phones).toContain(newPhone);
      });

      it('never changes a patient the EMR owns from a snapshot, and reports the fields that differ (never their values)', async () => {
        const ownPhone = phone();
        const own = await h.addEmrPatient({ name: 'Owned By EMR', phone: ownPhone });
        const serviceId = sid('pat');
        await emr.ensurePatient({ serviceId, externalId: own, name: 'Owned By EMR', phone: ownPhone });
        expect(await emr.updatePatient(own, { serviceId, name: 'Owned By EMR', phone: ownPhone })).toEqual({ differences: [] });
        const update = await emr.updatePatient(own, { serviceId, name: 'Service Spelling', phone: phone() });
        expect([...update.differences].sort()).toEqual(['name', 'phone']);
        expect(await h.readPatient(own)).toEqual({ name: 'Owned By EMR', phones: [ownPhone], serviceIds: [serviceId] });
      });

      it("links an existing patient to the service's id, idempotently, and finds it by that id afterwards", async () => {
        const own = await h.addEmrPatient({ name: 'Met Through A Document', phone: phone() });
        const serviceId = sid('pat');
        await emr.linkPatient(own, serviceId);
        await emr.linkPatient(own, serviceId);
        expect((await h.readPatient(own))?.serviceIds).toEqual([serviceId]);
        expect(await emr.ensurePatient({ serviceId, name: 'Met Through A Document', phone: phone() })).toEqual({ id: own, created: false });
        expect(await h.countByServiceId('patient', serviceId)).toBe(1);
      });
    });

    describe('appointments', () => {
      it('applies a newer full snapshot to an appointment (rescheduled)', async () => {
        const input = await appointment();
        const { id } = await emr.ensureAppointment(input);
        expect(await h.readAppointment(id)).toMatchObject({ cancelled: false, serviceStatus: 'Approved' });
        await emr.updateAppointment(id, { ...input, startsAt: '2026-02-03T14:30:00.000Z', occurredAt: '2026-01-16T10:00:00.000Z' });
        const held = await h.readAppointment(id);
        expect(Date.parse(held!.startsAt)).toBe(Date.parse('2026-02-03T14:30:00.000Z'));
        expect(held!.cancelled).toBe(false);
      });

      it('cancels an appointment: a snapshot with status Cancelled applied with updateAppointment', async () => {
        const input = await appointment();
        const { id } = await emr.ensureAppointment(input);
        await emr.updateAppointment(id, { ...input, status: 'Cancelled', occurredAt: '2026-01-16T10:00:00.000Z' });
        expect(await h.readAppointment(id)).toMatchObject({ cancelled: true, serviceStatus: 'Cancelled' });
        expect(await h.countByServiceId('appointment', input.serviceId)).toBe(1);
      });

      it('keeps a status it does not know as the service sent it', async () => {
        const input = await appointment();
        const { id } = await emr.ensureAppointment(input);
        await emr.updateAppointment(id, { ...input, status: 'Tentative' });
        expect(await h.readAppointment(id)).toMatchObject({ cancelled: false, serviceStatus: 'Tentative' });
      });
    });

    describe('documents', () => {
      it('lists the documents waiting in the EMR with their type, label, file and patient, and after a watermark what changed since', async () => {
        const serviceId = sid('pat');
        const patientPhone = phone();
        const patient = await emr.ensurePatient({ serviceId, name: 'Document Patient', phone: patientPhone });
        const own = await h.addEmrPatient({ name: 'Unknown To Service', phone: phone() });
        const lab = await h.addDocument({
          patientId: patient.id,
          documentType: 'lab_report',
          label: 'Full blood count',
          filename: 'fbc.pdf',
          mimeType: 'application/pdf',
          bytes: PDF,
          content: 'inline',
        });
        await new Promise((r) => setTimeout(r, 25));
        const rx = await h.addDocument({
          patientId: own,
          documentType: 'prescription',
          label: 'Amoxicillin',
          filename: 'rx.pdf',
          mimeType: 'application/pdf',
          bytes: PDF,
          content: 'url',
        });

        const first = await emr.listDocumentsChangedSince(undefined);
        const byId = (docs: EmrDocument[], id: string) => docs.find((d) => d.id === id);
        expect(byId(first.documents, lab)).toMatchObject({
          documentType: 'lab_report',
          label: 'Full blood count',
          filename: 'fbc.pdf',
          mimeType: 'application/pdf',
          patient: { id: patient.id, serviceId, name: 'Document Patient', phone: patientPhone },
        });
        expect(byId(first.documents, lab)!.version).toBeTruthy();
        const listedRx = byId(first.documents, rx);
        expect(listedRx).toMatchObject({
          documentType: 'prescription',
          label: 'Amoxicillin',
          filename: 'rx.pdf',
          patient: { id: own, name: 'Unknown To Service' },
        });
        expect(listedRx!.patient.serviceId).toBeUndefined();
        expect(typeof first.watermark).toBe('string');

        await new Promise((r) => setTimeout(r, 25));
        const later = await h.addDocument({
          patientId: patient.id,
          documentType: 'lab_report',
          label: 'HbA1c',
          filename: 'hba1c.pdf',
          mimeType: 'application/pdf',
          bytes: PDF,
          content: 'inline',
        });
        const next = await emr.listDocumentsChangedSince(first.watermark);
        expect(byId(next.documents, later)).toMatchObject({ documentType: 'lab_report', label: 'HbA1c' });
        // Unchanged since the watermark (written well before it): not listed again.
        expect(byId(next.documents, lab)).toBeUndefined();
      });

      it("reads a document's bytes, inline or at a URL on the EMR, and refuses content on another origin", async () => {
        const patient = await emr.ensurePatient({ serviceId: sid('pat'), name: 'Bytes Patient', phone: phone() });
        const inline = await h.addDocument({
          patientId: patient.id,
          documentType: 'lab_report',
          label: 'Inline',
          filename: 'inline.pdf',
          mimeType: 'application/pdf',
          bytes: PDF,
          content: 'inline',
        });
        const atUrl = await h.addDocument({
          patientId: patient.id,
          documentType: 'lab_report',
          label: 'At a URL',
          filename: 'url.pdf',
          mimeType: 'application/pdf',
          bytes: PDF,
          content: 'url',
        });
        const { documents } = await emr.listDocumentsChangedSince(undefined);
        for (const id of [inline, atUrl]) expect(Buffer.from(await emr.readDocumentBytes(documents.find((d) => d.id === id)!))).toEqual(Buffer.from(PDF));
        const elsewhere: EmrDocument = { ...documents.find((d) => d.id === atUrl)!, content: { url: 'https://elsewhere.invalid/Binary/1' } };
        const err = await failure(emr.readDocumentBytes(elsewhere));
        expect({ code: err.code, retryable: err.retryable }).toEqual({ code: 'document_content_refused', retryable: false });
      });

      it("records a document's outcome in one place, updated as it moves on; the same outcome again changes nothing", async () => {
        const patient = await emr.ensurePatient({ serviceId: sid('pat'), name: 'Outcome Patient', phone: phone() });
        const documentId = await h.addDocument({
          patientId: patient.id,
          documentType: 'lab_report',
          label: 'Outcome',
          filename: 'o.pdf',
          mimeType: 'application/pdf',
          bytes: PDF,
          content: 'inline',
        });
        expect(await h.readOutcomes(documentId)).toEqual([]);
        const base = { documentId, documentType: 'lab_report' as const };
        await emr.recordDocumentOutcome({
          ...base,
          status: 'HELD',
          statusReason: 'quiet hours',
          releaseAfter: '2026-01-16T07:00:00.000Z',
          occurredAt: '2026-01-15T22:00:00.000Z',
        });
        expect((await h.readOutcomes(documentId)).map((o) => o.status)).toEqual(['HELD']);
        const sent: DocumentOutcome = {
          ...base,
          status: 'SENT',
          serviceId: 'svc_doc_1',
          sentAt: '2026-01-16T07:00:01.000Z',
          occurredAt: '2026-01-16T07:00:02.000Z',
        };
        await emr.recordDocumentOutcome(sent);
        const [once, ...rest] = await h.readOutcomes(documentId);
        expect(rest).toEqual([]);
        expect(once!.status).toBe('SENT');
        await emr.recordDocumentOutcome(sent);
        expect(await h.readOutcomes(documentId)).toEqual([once]);
      });
    });

    describe('ping and failures', () => {
      it('answers ping while the EMR is reachable and takes the adapter', async () => {
        await expect(emr.ping()).resolves.toBeUndefined();
      });

      it('fails every call with emr_unavailable (retryable, not an incident) while the EMR cannot be reached, and works again after', async () => {
        await expectEveryCallFails(() => h.unreachable(), 'emr_unavailable', { retryable: true, incident: false });
      });

      it('fails every call with emr_unauthorized (an incident, waited out) when the EMR refuses the adapter itself', async () => {
        await expectEveryCallFails(() => h.refusingAdapter(), 'emr_unauthorized', { retryable: true, incident: true });
      });

      it('fails a call the EMR refuses with emr_rejected (not retryable, not an incident), and the next call works', async () => {
        const missing = `no-such-patient-${run}`;
        for (const call of [
          () => emr.updatePatient(missing, { serviceId: sid('pat'), name: 'Nobody', phone: phone() }),
          () => emr.linkPatient(missing, sid('pat')),
        ]) {
          const err = await failure(call());
          expect({ code: err.code, retryable: err.retryable, incident: err.incident }).toEqual({ code: 'emr_rejected', retryable: false, incident: false });
        }
        expect((await emr.ensurePatient({ serviceId: sid('pat'), name: 'After A Refusal', phone: phone() })).created).toBe(true);
      });
    });
  });
}
