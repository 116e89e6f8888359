// The behaviour of an EmrPort in the pushed shape (an EMR that takes a write now and names its id later, and
// pushes documents: HL7 v2 over MLLP), as one reusable vitest suite beside describe-emr-port.ts, which covers
// the claims, patients and failures every port shares. Here: a claim answers a pending handle at once, the
// same one when asked again, and one record per serviceId; the EMR names each id once through the inbound;
// an appointment's later changes go by handle before the id is known and by id after; documents arrive through
// the inbound with their content, none is scanned; whatever the inbound fails to store is sent again.
//
//   describePushedEmrPort('my EMR', async () => myHarness());
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppointmentInput, EmrDocument, EmrInbound, EmrPort, IdentifiedRecord } from '../../../src/emr/port.ts';
import type { ClaimedKind, DocumentSeed, FailingEmr, HeldAppointment, HeldPatient } from './describe-emr-port.ts';

/** What the suite needs besides the port, arranged and read in the EMR itself, never through the port under test. */
export interface PushedEmrHarness {
  emr: EmrPort;
  /**
   * Lets the EMR send what it has to send now (its feed) and resolves once the inbound has had all of it, or,
   * while the inbound refuses, once the EMR has tried (it keeps what was refused for later).
   */
  settle(): Promise<void>;
  countByServiceId(kind: ClaimedKind, serviceId: string): Promise<number>;
  /** The patient with this EMR id (its own, as named through the inbound). */
  readPatient(emrId: string): Promise<HeldPatient | undefined>;
  readAppointment(emrId: string): Promise<HeldAppointment | undefined>;
  /** The EMR's staff file a document for a patient (by the service's id): it goes to the adapter on the next settle. */
  fileDocument(seed: Omit<DocumentSeed, 'patientId' | 'content'> & { patientServiceId: string }): Promise<string>;
  unreachable(): Promise<FailingEmr>;
  close(): Promise<void>;
}

/** The adapter's side of the inbound, recording what it was given; `failing` makes it refuse as a failing store would. */
function recordingInbound() {
  const identified: IdentifiedRecord[] = [];
  const documents: EmrDocument[] = [];
  const state = new Map<string, string>();
  const inbound: EmrInbound & { failing: boolean; identified: IdentifiedRecord[]; documents: EmrDocument[] } = {
    state: {
      get: async (key) => state.get(key),
      getMany: async (keys) => new Map(keys.filter((k) => state.has(k)).map((k) => [k, state.get(k)!])),
      put: async (key, value) => void state.set(key, value),
      putMany: async (entries) => {
        for (const [key, value] of entries) state.set(key, value);
      },
      async putNew(key, value) {
        if (state.has(key)) return false;
        state.set(key, value);
        return true;
      },
      // The suite runs within minutes: nothing it keeps is old enough to prune.
      pruneBefore: async () => 0,
    },
    failing: false,
    identified,
    documents,
    async recordIdentified(r, entries) {
      if (inbound.failing) throw new Error('the store is failing');
      if (!identified.some((x) => x.entityType === r.entityType && x.serviceId === r.serviceId)) identified.push(r);
      // In the mapping's commit, as the adapter's storage writes them.
      for (const [key, value] of entries ?? []) state.set(key, value);
    },
    async documentPushed(doc) {
      if (inbound.failing) throw new Error('the store is failing');
      if (!documents.some((d) => d.id === doc.id)) documents.push(doc);
    },
    async documentCancelled(documentId) {
      const at = documents.findIndex((d) => d.id === documentId);
      if (at < 0) return 'unknown';
      documents.splice(at, 1);
      return 'cancelled';
    },
  };
  return inbound;
}

const PDF = new Uint8Array(Buffer.from('%PDF-1.4\n% a synthetic document for the pushed EmrPort suite\n%%EOF\n'));

export function describePushedEmrPort(name: string, makeEmr: () => Promise<PushedEmrHarness>): void {
  describe(`EmrPort conformance, pushed shape: ${name}`, () => {
    let h: PushedEmrHarness;
    let emr: EmrPort;
    const inbound = recordingInbound();
    const run = randomBytes(4).toString('hex');
    let seq = 0;
    const sid = (prefix: string) => `${prefix}_${run}_${++seq}`;
    const phone = () => `+1555${String(2_000_000 + ++seq).slice(-7)}`;
    const idOf = (entityType: IdentifiedRecord['entityType'], serviceId: string) =>
      inbound.identified.filter((r) => r.entityType === entityType && r.serviceId === serviceId);

    beforeAll(async () => {
      h = await makeEmr();
      emr = h.emr;
      await emr.start?.(inbound);
    });
    afterAll(async () => h?.close());

    async function appointment(overrides: Partial<AppointmentInput> = {}): Promise<AppointmentInput> {
      const patient = await emr.ensurePatient({ serviceId: sid('pat'), name: 'Pushed Patient', phone: phone() });
      const doctor = await emr.ensurePractitioner({ serviceId: sid('doc'), name: 'Dr Pushed' });
      const location = await emr.ensureLocation({ serviceId: sid('loc'), name: 'Pushed Room' });
      return {
        serviceId: sid('apt'),
        status: 'Approved',
        startsAt: '2026-03-01T09:00:00.000Z',
        startsAtLocal: '2026-03-01T10:00:00.000+01:00',
        mode: 'Offline',
        token: 'P-1',
        notes: '',
        payment: { type: 'Unpaid', amountPaid: 0, balanceDue: 20, currency: 'EUR', payAtClinic: true },
        patientId: patient.id,
        practitionerId: doctor.id,
        locationId: location.id,
        occurredAt: '2026-02-15T10:00:00.000Z',
        ...overrides,
      };
    }

    it('says it pushes documents, and a scan finds none', async () => {
      expect(emr.documentSource).toBe('pushed');
      expect((await emr.listDocumentsChangedSince(undefined)).documents).toEqual([]);
    });

    it('takes a claim at once with a pending handle, the same one when asked again, and names the EMR id once', async () => {
      const patient = { serviceId: sid('pat'), name: 'Named Later', phone: phone() };
      const first = await emr.ensurePatient(patient);
      expect({ created: first.created, pending: first.pending }).toEqual({ created: true, pending: true });
      expect(await emr.ensurePatient(patient)).toEqual({ id: first.id, created: false, pending: true });
      await h.settle();
      await h.settle();
      const named = idOf('patient', patient.serviceId);
      expect(named).toHaveLength(1);
      expect(await h.readPatient(named[0]!.emrId)).toMatchObject({ name: 'Named Later', serviceIds: [patient.serviceId] });
      expect(await h.countByServiceId('patient', patient.serviceId)).toBe(1);
    });

    // As in describe-emr-port.ts: the processor never claims one serviceId twice at once (a lock per entity).
    it('makes one record for a serviceId claimed again and again, and names it once', async () => {
      const patient = { serviceId: sid('pat'), name: 'Busy Patient', phone: phone() };
      const claims = [];
      for (let i = 0; i < 4; i++) claims.push(await emr.ensurePatient(patient));
      expect(claims.filter((c) => c.created)).toHaveLength(1);
      expect(new Set(claims.map((c) => c.id)).size).toBe(1);
      await h.settle();
      expect(idOf('patient', patient.serviceId)).toHaveLength(1);
      expect(await h.countByServiceId('patient', patient.serviceId)).toBe(1);
    });

    it("applies an appointment's changes by its handle before the EMR named it, and by the EMR's id after", async () => {
      const input = await appointment();
      const claimed = await emr.ensureAppointment(input);
      expect(claimed.pending).toBe(true);
      const moved = { startsAt: '2026-03-02T09:00:00.000Z', startsAtLocal: '2026-03-02T10:00:00.000+01:00' };
      await emr.updateAppointment(claimed.id, { ...input, ...moved, status: 'Pending', occurredAt: '2026-02-15T11:00:00.000Z' });
      await h.settle();
      const [named] = idOf('appointment', input.serviceId);
      expect(named).toBeDefined();
      expect(await h.readAppointment(named!.emrId)).toMatchObject({ startsAt: '2026-03-02T09:00:00.000Z', cancelled: false });
      await emr.updateAppointment(named!.emrId, { ...input, ...moved, status: 'Cancelled', occurredAt: '2026-02-15T12:00:00.000Z' });
      await h.settle();
      expect(await h.readAppointment(named!.emrId)).toMatchObject({ cancelled: true });
      expect(await h.countByServiceId('appointment', input.serviceId)).toBe(1);
    });

    it('hands in a document the EMR files, with its patient, type, label and content', async () => {
      const patient = { serviceId: sid('pat'), name: 'Document Patient', phone: phone() };
      await emr.ensurePatient(patient);
      await h.settle();
      const id = await h.fileDocument({
        patientServiceId: patient.serviceId,
        documentType: 'lab_report',
        label: 'Lipid panel',
        filename: 'lipids.pdf',
        mimeType: 'application/pdf',
        bytes: PDF,
      });
      await h.settle();
      const doc = inbound.documents.find((d) => d.id === id);
      expect(doc).toMatchObject({ documentType: 'lab_report', label: 'Lipid panel' });
      expect(doc!.patient).toMatchObject({ name: 'Document Patient', phone: patient.phone });
      expect(Buffer.from(await emr.readDocumentBytes(doc!)).equals(Buffer.from(PDF))).toBe(true);
    });

    it('sends again whatever the adapter could not store: an id and a document, taken once the store works', async () => {
      const patient = { serviceId: sid('pat'), name: 'Retried Patient', phone: phone() };
      inbound.failing = true;
      try {
        await emr.ensurePatient(patient);
        await h.settle();
        expect(idOf('patient', patient.serviceId)).toHaveLength(0);
      } finally {
        inbound.failing = false;
      }
      await h.settle();
      expect(idOf('patient', patient.serviceId)).toHaveLength(1);
      inbound.failing = true;
      let id = '';
      try {
        id = await h.fileDocument({
          patientServiceId: patient.serviceId,
          documentType: 'prescription',
          label: 'Amoxicillin',
          filename: 'rx.pdf',
          mimeType: 'application/pdf',
          bytes: PDF,
        });
        await h.settle();
        expect(inbound.documents.some((d) => d.id === id)).toBe(false);
      } finally {
        inbound.failing = false;
      }
      await h.settle();
      expect(inbound.documents.filter((d) => d.id === id)).toHaveLength(1);
    });

    // Whether an unreachable EMR is an outage or an EMR-wide incident is the module's rule (HL7 v2: an incident).
    it('fails a claim as retryable, never a refusal, while the EMR cannot be reached', async () => {
      const failing = await h.unreachable();
      try {
        const err = await failing.emr.ensurePatient({ serviceId: sid('pat'), name: 'Unreached', phone: phone() }).catch((e: unknown) => e);
        expect(err).toMatchObject({ retryable: true });
        expect((err as { code: string }).code).not.toBe('emr_rejected');
      } finally {
        await failing.end();
      }
      await expect(emr.ping()).resolves.toBeUndefined();
    });
  });
}
