// The EMR side of the pusher: documents that appeared or changed in the EMR since the last watermark
// become outbox rows, their externalId being the EMR document id. A document already in the outbox is
// not sent again when it changes (a new version needs a new document in the EMR): the service would
// only replay its first answer for that externalId anyway. The documents of a scan are filed together, a
// few megabytes of requests to a transaction (one commit, one fsync), the last with the new watermark; a
// crash before a commit leaves its documents to the next scan (the watermark has not moved past them).
import type { Clock } from '../clock.ts';
import type { DocumentRequest } from '../contract/documents.ts';
import type { Db } from '../database/open.ts';
import type { EmrDocument, EmrPort } from '../emr/port.ts';
import { describeError, isRetryable } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { checkDocument, type CheckResult } from './checks.ts';
import type { Outbox, OutboxRow } from './outbox.ts';

/**
 * Whether the request names the patient by the EMR's own id (patientExternalId). Always when the service
 * already has it (the record carries the service's id); and with the phone and name of a patient the
 * service has not met, so that the patient it creates carries the EMR's id from the start: its
 * patient.created then leads the processor to this record, whether or not the pusher has linked the two
 * yet. Without phone and name an id the service does not know would not identify anyone: left out, so the
 * local checks refuse the document with that reason.
 */
const identifiedByEmrId = (p: EmrDocument['patient']): boolean => Boolean(p.id && (p.serviceId || (p.phone && p.name)));

/**
 * The request for one EMR document. Content behind a URL is read from the EMR (signed in, as everything
 * is) and sent as bytes: the service could not sign in to the EMR to fetch it.
 */
async function requestFor(emr: EmrPort, doc: EmrDocument): Promise<Record<string, unknown>> {
  const file = 'url' in doc.content ? { base64: Buffer.from(await emr.readDocumentBytes(doc)).toString('base64') } : { ...doc.content };
  const p = doc.patient;
  const request: Partial<DocumentRequest> & Record<string, unknown> = {
    externalId: doc.id,
    label: doc.label,
    ...(identifiedByEmrId(p) ? { patientExternalId: p.id } : {}),
    ...(p.phone ? { patientPhone: p.phone } : {}),
    ...(p.name ? { patientName: p.name } : {}),
    ...(doc.doctorPhone ? { doctorPhone: doc.doctorPhone } : {}),
    file: { ...file, filename: doc.filename, ...(doc.mimeType ? { mimeType: doc.mimeType } : {}) },
  };
  return request;
}

export interface Scanner {
  /** Takes in what changed in the EMR since the watermark; returns how many new documents entered the outbox. */
  scanOnce(): Promise<number>;
}

/** One scanned EMR document, checked; 'unavailable' when its content could not be read now. */
type Taken = CheckResult | 'unavailable';

/** A checked document waiting for its transaction. */
interface Filing {
  doc: EmrDocument;
  checked: CheckResult;
  existing: OutboxRow | undefined;
  log: Logger;
}

/** Requests (in base64 characters) filed in one transaction: fewer commits, yet a bounded hold on memory and on the write lock. */
export const SCAN_FILING_BATCH_CHARS = 4 * 1024 * 1024;

const requestChars = (c: CheckResult): number => (c.ok ? (c.request.file.base64?.length ?? 0) + 1024 : 1024);

/** `onFiled`: told after each commit that added documents (they can be sent at once). */
export function createScanner(deps: { db: Db; clock: Clock; logger: Logger; emr: EmrPort; outbox: Outbox; onFiled?: () => void }): Scanner {
  const read = deps.db.prepare('SELECT watermark FROM pusher_watermark WHERE id = 1').pluck();
  const write = deps.db.prepare('UPDATE pusher_watermark SET watermark = ? WHERE id = 1');

  /** The request of a document, checked; content the EMR refuses for good rejects it with that reason. */
  async function check(doc: EmrDocument, log: Logger): Promise<Taken> {
    try {
      return checkDocument(doc.documentType, await requestFor(deps.emr, doc));
    } catch (err) {
      // An outage or an incident leaves the document for the next scan (same watermark), failing nothing.
      if (isRetryable(err)) {
        log.warn({ err: describeError(err) }, 'document content unavailable; will retry on the next scan');
        return 'unavailable';
      }
      const d = describeError(err);
      return { ok: false, code: d.code ?? 'document_content_refused', reason: d.message };
    }
  }

  /** Files a checked document: a new row, or a new version of one refused before. Returns whether it was added, and what to log once committed. */
  function file({ doc, checked, existing, log }: Filing): { added: boolean; logged?: () => void } {
    if (existing) {
      if (checked.ok) deps.outbox.requeue(doc.id, checked.request, doc.version);
      else deps.outbox.recordRejection(doc.id, checked.code, checked.reason, doc.version);
      return { added: checked.ok };
    }
    const { created } = deps.outbox.enqueue({
      externalId: doc.id,
      documentType: doc.documentType,
      source: 'emr',
      emrDocumentId: doc.id,
      emrVersion: doc.version,
      ...(doc.patient.id ? { emrPatientId: doc.patient.id } : {}),
      ...(checked.ok ? { request: checked.request } : { rejected: { code: checked.code, reason: checked.reason } }),
    });
    if (!created) return { added: false };
    return { added: true, logged: () => log.info({ accepted: checked.ok, ...(checked.ok ? {} : { code: checked.code }) }, 'document taken from the EMR') };
  }

  /** Files the documents in one transaction, with the watermark when given; returns how many were added. */
  const fileAll = deps.db.transaction((filings: Filing[], watermark: string | undefined) => {
    const filed = filings.map(file);
    if (watermark) write.run(watermark);
    return filed;
  });
  function commit(filings: Filing[], watermark?: string): number {
    if (!filings.length && !watermark) return 0;
    const filed = fileAll.immediate(filings, watermark);
    for (const f of filed) f.logged?.();
    const added = filed.filter((f) => f.added).length;
    if (added) deps.onFiled?.();
    return added;
  }

  return {
    async scanOnce() {
      const since = (read.get() as string | null) ?? undefined;
      const { documents, watermark } = await deps.emr.listDocumentsChangedSince(since);
      let added = 0;
      let batch: Filing[] = [];
      let chars = 0;
      let first = true;
      for (const doc of documents) {
        const existing = deps.outbox.get(doc.id);
        // Only a document refused by the local checks is looked at again, once the EMR has changed it.
        if (existing && (existing.state !== 'REJECTED' || existing.emr_version === doc.version)) continue;
        const log = deps.logger.child({ externalId: doc.id, documentType: doc.documentType });
        const checked = await check(doc, log);
        // What was read before is filed; the watermark stays, so this document and the rest come again.
        if (checked === 'unavailable') return added + commit(batch);
        batch.push({ doc, checked, existing, log });
        chars += requestChars(checked);
        // The first one at once, so that sending starts while the rest are read.
        if (first || chars >= SCAN_FILING_BATCH_CHARS) {
          first = false;
          added += commit(batch);
          batch = [];
          chars = 0;
        }
        // The rest of the event loop (the sends of documents filed already, webhooks) goes on between two.
        await new Promise((resolve) => setImmediate(resolve));
      }
      return added + commit(batch, watermark ?? undefined);
    },
  };
}
