// The in-memory EMR in the shape of a pushed EMR (HL7 v2 over MLLP is the real one): a claim is taken at once
// but the EMR names its own id later, through its feed; documents are not scanned but handed to the adapter,
// and one the adapter does not take (its store failing) is sent again. Built on the request/response twin
// (./index.ts), whose records it keeps: the port answers a handle (`pending:<kind>:<serviceId>`) that it
// takes wherever an EMR id goes, and `feed()` plays the EMR's outbound interface, as a test or a benchmark
// decides when. It passes the pushed shape of the conformance suite (test/emr/memory-conformance.test.ts).
import type { MappingEntityType } from '../../contract/api.ts';
import type { AppointmentInput, EmrDocument, EmrInbound, EmrPort, EmrRecord, IdentifiedRecord } from '../port.ts';
import { createMemoryEmr, type MemoryEmr } from './index.ts';

export interface PushedMemoryEmr extends EmrPort {
  /** The request/response twin underneath: its records, its failure switches. */
  emr: MemoryEmr;
  /** Plays the EMR's feed: names every record claimed since, and hands in every document waiting; once each is taken. */
  feed(): Promise<void>;
  /** A document the EMR's staff filed: it waits for the next feed(). */
  fileDocument(doc: EmrDocument): void;
  /** Identities and documents the adapter has not taken yet (its inbound failed, or no feed since). */
  waiting(): { identities: number; documents: number };
  /** What the adapter was told, in order (tests read it). */
  identified: IdentifiedRecord[];
}

type Kind = keyof MemoryEmr['records'];
const ENTITY: Record<Kind, MappingEntityType> = { patient: 'patient', practitioner: 'doctor', location: 'location', appointment: 'appointment' };
const PENDING = /^pending:(patient|practitioner|location|appointment):(.+)$/;

export function createPushedMemoryEmr(emr: MemoryEmr = createMemoryEmr()): PushedMemoryEmr {
  let inbound: EmrInbound | undefined;
  const unnamed: { kind: Kind; serviceId: string }[] = [];
  const documents: EmrDocument[] = [];
  const identified: IdentifiedRecord[] = [];

  /** The EMR's id behind a handle (or an id already). */
  const resolve = (id: string): string => {
    const m = PENDING.exec(id);
    return m ? (emr.records[m[1] as Kind].get(m[2]!)?.id ?? id) : id;
  };
  const resolveInput = (a: AppointmentInput): AppointmentInput => ({
    ...a,
    patientId: resolve(a.patientId),
    practitionerId: resolve(a.practitionerId),
    locationId: resolve(a.locationId),
  });
  /** A claim: the EMR takes it, and will name its id in its feed. */
  async function claim(kind: Kind, serviceId: string, ensure: () => Promise<EmrRecord>): Promise<EmrRecord> {
    const record = await ensure();
    if (record.created) unnamed.push({ kind, serviceId });
    return { id: `pending:${kind}:${serviceId}`, created: record.created, pending: true };
  }

  async function feed(): Promise<void> {
    if (!inbound) throw new Error('the pushed EMR has not been started');
    // In the order the EMR made them; one the adapter does not take stays for the next feed.
    for (const item of unnamed.splice(0)) {
      const record = { entityType: ENTITY[item.kind], serviceId: item.serviceId, emrId: emr.records[item.kind].get(item.serviceId)!.id };
      try {
        await inbound.recordIdentified(record);
        identified.push(record);
      } catch {
        unnamed.push(item);
      }
    }
    for (const doc of documents.splice(0)) {
      try {
        await inbound.documentPushed(doc);
      } catch {
        documents.push(doc);
      }
    }
  }

  return {
    emr,
    identified,
    feed,
    fileDocument: (doc) => void documents.push(doc),
    waiting: () => ({ identities: unnamed.length, documents: documents.length }),
    refs: emr.refs,
    documentSource: 'pushed',
    async start(given) {
      inbound = given;
    },
    ensurePatient: (p) => claim('patient', p.serviceId, () => emr.ensurePatient(p)),
    updatePatient: (id, p) => emr.updatePatient(resolve(id), p),
    linkPatient: (id, serviceId) => emr.linkPatient(resolve(id), serviceId),
    ensurePractitioner: (d) => claim('practitioner', d.serviceId, () => emr.ensurePractitioner(d)),
    ensureLocation: (l) => claim('location', l.serviceId, () => emr.ensureLocation(l)),
    ensureAppointment: (a) => claim('appointment', a.serviceId, () => emr.ensureAppointment(resolveInput(a))),
    updateAppointment: (id, a) => emr.updateAppointment(resolve(id), resolveInput(a)),
    // Nothing to scan: documents come through the feed.
    async listDocumentsChangedSince(watermark) {
      await emr.ping();
      return { documents: [], watermark: watermark ?? '' };
    },
    readDocumentBytes: (doc) => emr.readDocumentBytes(doc),
    recordDocumentOutcome: (o) => emr.recordDocumentOutcome(o),
    ping: () => emr.ping(),
    close: () => emr.close(),
  };
}
