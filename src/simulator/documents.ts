// The document state table of docs/service-interface.md, with docs/decisions.md#transitions-after-held and
// docs/decisions.md#releasing-held-documents: a pushed document is SUPPRESSED (sandbox key),
// HELD (auto-send off, or quiet hours with releaseAfter), or delivered to the patient's messaging
// account: SENT with sentAt, or FAILED with statusReason. HELD for quiet hours is released at
// releaseAfter; a clinic person's release re-applies quiet hours. SENT, FAILED, SUPPRESSED are final.
import { randomBytes } from 'node:crypto';
import { toIso, sleep, type Clock } from '../clock.ts';
import type { Db } from '../sqlite/open.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { documentEvent } from './events.ts';
import type { Faults } from './faults.ts';
import { quietUntil } from './quiet-hours.ts';
import type { StoredFile } from './files.ts';
import type { Clinic, SimDocument, Store } from './store.ts';

export interface DocumentFlow {
  /** Decides and records the outcome of a newly stored document. */
  decide(doc: SimDocument, sandbox: boolean): Promise<SimDocument>;
  /** A clinic person releases a HELD document. */
  release(serviceId: string): Promise<SimDocument>;
  /** Delivers quiet-hours holds whose releaseAfter has passed. */
  releaseDue(): Promise<number>;
  nextReleaseAt(): number | undefined;
}

const TYPE_NAME = { lab_report: 'lab reports', prescription: 'prescriptions' } as const;

export const newServiceId = (prefix: string) => `${prefix}_${randomBytes(6).toString('hex')}`;

export function messageText(label: string, documentType: SimDocument['documentType']): string {
  return documentType === 'lab_report' ? `Your lab report is ready: ${label}` : `Your prescription: ${label}`;
}

interface DocumentFlowDeps {
  db: Db;
  store: Store;
  clock: Clock;
  faults: () => Faults;
  emit: (event: ReturnType<typeof documentEvent>) => void;
}

export function createDocumentFlow(deps: DocumentFlowDeps): DocumentFlow {
  const { store, clock } = deps;
  const flow = flowOf(deps);
  return {
    decide: (doc, sandbox) => decide(flow, doc, sandbox),
    async release(serviceId) {
      const doc = store.get('document', serviceId);
      if (!doc) throw new NotFoundError('no such document');
      if (doc.status !== 'HELD') throw new ValidationError(`the document is ${doc.status}, not HELD`, undefined, 'not_held');
      const quiet = holdForQuietHours(clock, doc, store.get('clinic', doc.clinicId)!);
      if (quiet) {
        store.put('document', quiet);
        return quiet;
      }
      return deliver(flow, doc);
    },
    async releaseDue() {
      const now = clock.now();
      const due = store.quietHolds().filter((d) => d.releaseAfter && Date.parse(d.releaseAfter) <= now);
      for (const d of due) await deliver(flow, d);
      return due.length;
    },
    nextReleaseAt() {
      const times = store.quietHolds().map((d) => Date.parse(d.releaseAfter!));
      return times.length ? Math.min(...times) : undefined;
    },
  };
}

/** What the flow's steps use: its dependencies and the message insert. */
type Flow = ReturnType<typeof flowOf>;

function flowOf(deps: DocumentFlowDeps) {
  const insertMessage = deps.db.prepare(
    'INSERT INTO messages (clinic_id, document_id, phone, text, attachment_name, mime_type, size, sha256, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  return { ...deps, insertMessage };
}

/** A newly stored document: SUPPRESSED (sandbox key), HELD (auto-send off, quiet hours), or delivered. */
async function decide(flow: Flow, doc: SimDocument, sandbox: boolean): Promise<SimDocument> {
  const clinic = flow.store.get('clinic', doc.clinicId)!;
  if (sandbox) {
    const suppressed: SimDocument = { ...doc, status: 'SUPPRESSED' };
    flow.store.put('document', suppressed);
    return suppressed;
  }
  if (!clinic.autoSend[doc.documentType]) {
    const held: SimDocument = {
      ...doc,
      status: 'HELD',
      heldFor: 'auto_send',
      statusReason: `auto-send is off for ${TYPE_NAME[doc.documentType]}; a person at the clinic releases it`,
    };
    flow.store.put('document', held);
    return held;
  }
  const quiet = holdForQuietHours(flow.clock, doc, clinic);
  if (quiet) {
    flow.store.put('document', quiet);
    return quiet;
  }
  return deliver(flow, doc);
}

function holdForQuietHours(clock: Clock, doc: SimDocument, clinic: Clinic): SimDocument | undefined {
  const until = quietUntil(clock.now(), clinic.timeZone, clinic.quietHours);
  if (until === undefined) return undefined;
  const { sentAt: _s, ...rest } = doc;
  return {
    ...rest,
    status: 'HELD',
    heldFor: 'quiet_hours',
    statusReason: `quiet hours (${clinic.quietHours.start}-${clinic.quietHours.end} ${clinic.timeZone})`,
    releaseAfter: toIso(until),
  };
}

/** To the patient's messaging account: SENT with sentAt, or FAILED with statusReason; its event follows. */
async function deliver(flow: Flow, doc: SimDocument): Promise<SimDocument> {
  const { store, clock } = flow;
  const faults = flow.faults().messaging;
  if (faults?.slowMs) await sleep(faults.slowMs);
  const { releaseAfter: _r, heldFor: _h, statusReason: _sr, ...rest } = doc;
  let result: SimDocument;
  const patient = store.get('patient', doc.patientServiceId);
  if (faults?.failReason || !patient?.phone) {
    result = { ...rest, status: 'FAILED', statusReason: faults?.failReason ?? 'the patient has no messaging account' };
  } else {
    const file: StoredFile = doc.file;
    flow.insertMessage.run(
      doc.clinicId,
      doc.id,
      patient.phone,
      messageText(doc.label, doc.documentType),
      file.name,
      file.mimeType,
      file.size,
      file.sha256,
      clock.now(),
    );
    result = { ...rest, status: 'SENT', sentAt: toIso(clock.now()) };
  }
  store.put('document', result);
  flow.emit(documentEvent(result, clock.now()));
  return result;
}
