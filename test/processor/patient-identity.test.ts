// Which EMR record a service patient is, with the processor and the pusher on one database and one
// in-memory EMR: a patient the service first meets through a document is the EMR's own record whichever
// of patient.created and the document's answer comes first, and a record the EMR owns never takes a
// service snapshot's name (the difference is reported, without values), while one the adapter made does.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import type { DocumentRequest, DocumentResource } from '../../src/contract/documents.ts';
import { createPusher } from '../../src/pusher/index.ts';
import { createSqliteCoordination } from '../../src/storage/sqlite/coordination.ts';
import { createSqliteDocumentStore } from '../../src/storage/sqlite/documents.ts';
import { captureLogger } from '../support/log-capture.ts';
import { appointmentEvent, processorFixture, type ProcessorFixture } from '../support/processor-fixture.ts';
import { PDF } from '../support/simulator-fixture.ts';
import { waitFor } from '../support/wait.ts';

const PHONE = '+15550001111';

function patientCreated(serviceId: string, externalId: string | null, name: string) {
  return {
    eventId: randomUUID(),
    eventType: 'patient.created',
    occurredAt: '2026-01-15T09:00:00.000Z',
    clinicId: 'clinic_1',
    patient: { serviceId, externalId, name, phone: PHONE },
  };
}

/**
 * The pusher beside the processor, its service scripted as the simulator behaves: a document for a patient
 * it does not know creates one (keeping the patientExternalId it was given) and files its patient.created
 * in the adapter's inbox before the answer comes back; `answer` lets that answer go.
 */
function documentFixture(f: ProcessorFixture) {
  const log = captureLogger();
  const requests: DocumentRequest[] = [];
  let answer!: () => void;
  const answered = new Promise<void>((r) => (answer = r));
  const pusher = createPusher({
    documents: createSqliteDocumentStore(f.db, f.clock),
    // The processor's own mapping store: one per SQLite database, as the adapter wires it.
    mappings: f.stores.mappings,
    coordination: createSqliteCoordination(),
    clock: f.clock,
    logger: log.logger,
    emr: f.emr,
    random: () => 0.5,
    config: parseConfig({}),
    serviceClient: {
      async postDocument(_type, body) {
        requests.push(body);
        f.store(patientCreated('pat_new', body.patientExternalId ?? null, 'Synthetic Patient'));
        await answered;
        const resource: DocumentResource = {
          type: 'document',
          documentType: 'lab_report',
          serviceId: 'doc_1',
          externalId: body.externalId,
          patientServiceId: 'pat_new',
          status: 'SENT',
          sentAt: '2026-01-15T09:00:01.000Z',
          action: 'received',
        };
        return { httpStatus: 201, replayed: false, resource };
      },
      async getDocument() {
        return undefined;
      },
    },
  });
  const emrPatientId = f.emr.addEmrPatient({ name: 'Synthetic Patient', phone: PHONE, birthDate: '1970-01-01' });
  f.emr.documents.push({
    id: 'dr-1',
    version: '1',
    documentType: 'lab_report',
    label: 'HbA1c',
    filename: 'hba1c.pdf',
    content: { base64: PDF.toString('base64') },
    patient: { id: emrPatientId, name: 'Synthetic Patient', phone: PHONE },
    lastUpdated: '2026-01-15T09:00:00.000Z',
  });
  return { pusher, requests, answer, emrPatientId, alerts: () => log.lines().filter((l) => l.alert === true) };
}

describe('a patient the service first meets through a document', () => {
  it("is the EMR's own record when patient.created is applied before the pusher has the answer", async () => {
    const f = processorFixture();
    const d = documentFixture(f);
    await d.pusher.scanOnce();
    const sending = d.pusher.runOnce();
    await waitFor(() => d.requests.length === 1 || undefined);
    expect(d.requests[0]).toMatchObject({ patientExternalId: d.emrPatientId, patientPhone: PHONE, patientName: 'Synthetic Patient' });
    // The bad order, forced: the service's event is applied while the document's answer is still on its way.
    expect(await f.processor.runOnce()).toBe(1);
    expect(f.emr.patients()).toHaveLength(1);
    d.answer();
    await sending;
    await d.pusher.runOnce();
    await f.processor.runOnce();

    expect(f.emr.patients().map((p) => p.id)).toEqual([d.emrPatientId]);
    expect(f.emr.records.patient.get('pat_new')?.id).toBe(d.emrPatientId);
    expect(d.alerts()).toEqual([]);
    // The service has the EMR's id already (the event carried it): no mapping to post for it.
    expect(f.mappingsPut.filter((m) => m.serviceId === 'pat_new')).toEqual([]);
    expect(f.emr.outcomes.get('dr-1')?.map((o) => o.status)).toEqual(['SENT']);
  });

  it('is the same one record when the answer comes first', async () => {
    const f = processorFixture();
    const d = documentFixture(f);
    await d.pusher.scanOnce();
    d.answer();
    await d.pusher.runOnce();
    await f.processor.runOnce();
    expect(f.emr.patients().map((p) => p.id)).toEqual([d.emrPatientId]);
    expect(d.alerts()).toEqual([]);
  });

  it('is a new record of its own, as before, when the service did not keep the EMR id (externalId null)', async () => {
    const f = processorFixture();
    f.store(patientCreated('pat_plain', null, 'Service Patient'));
    await f.processor.runOnce();
    expect(f.emr.records.patient.get('pat_plain')?.origin).toBe('adapter');
    expect(f.mappingsPut).toEqual([{ entityType: 'patient', serviceId: 'pat_plain', externalId: f.emr.records.patient.get('pat_plain')!.id }]);
  });
});

describe('service snapshots of a patient record', () => {
  it('never rename a record the EMR owns, and report the difference without its values', async () => {
    const f = processorFixture();
    const own = f.emr.addEmrPatient({ name: 'Synthetic Patient', phone: PHONE, birthDate: '1970-01-01' });
    f.store(patientCreated('pat_own', own, 'Synthetic Patient'));
    const e = appointmentEvent({ occurredAt: '2026-01-15T10:00:00.000Z' });
    e.patient = { serviceId: 'pat_own', externalId: own, name: 'Spelled Otherwise', phone: PHONE };
    f.store(e);
    await f.processor.runOnce();
    expect(f.emr.patients()).toHaveLength(1);
    expect(f.emr.patients()[0]!.data).toEqual({ name: 'Synthetic Patient', phone: PHONE, birthDate: '1970-01-01' });
    expect(f.emr.differences).toEqual([{ serviceId: 'pat_own', fields: ['name'] }]);
    expect(f.emr.appointments()[0]!.patientId).toBe(own);
  });

  it('rename a record the adapter created from the service', async () => {
    const f = processorFixture();
    f.store(patientCreated('pat_made', null, 'First Spelling'));
    await f.processor.runOnce();
    const e = appointmentEvent({ occurredAt: '2026-01-15T10:00:00.000Z' });
    e.patient = { serviceId: 'pat_made', externalId: f.emr.records.patient.get('pat_made')!.id, name: 'Second Spelling', phone: PHONE };
    f.store(e);
    await f.processor.runOnce();
    expect(f.emr.patients()).toHaveLength(1);
    expect((f.emr.records.patient.get('pat_made')!.data as { name: string }).name).toBe('Second Spelling');
    expect(f.emr.differences).toEqual([]);
  });
});
