// The EMR side of the pusher: documents that appeared or changed in the EMR since the last watermark
// become outbox rows, their externalId being the EMR document id. A document already in the outbox is
// not sent again when it changes (a new version needs a new document in the EMR): the service would
// only replay its first answer for that externalId anyway. One replica at a time scans (the pusher runs a
// scan under the coordination's 'emr-scan' hold), so the watermark moves forward only. The documents of a scan are filed together, a
// few megabytes of requests to a transaction (one commit, one fsync), the last with the new watermark; a
// crash before a commit leaves its documents to the next scan (the watermark has not moved past them).
// A scan is a trace of its own (src/tracing/), each document it files a `document file` span in it, whose trace
// context is stored with the document's row: its send, follow-ups and write-back are that span's children.
import type { DocumentRequest } from '../contract/documents.ts';
import { EmrError } from '../emr/errors.ts';
import type { EmrDocument, EmrPort } from '../emr/port.ts';
import { describeError, isRetryable } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { DocumentStore, OutboxRow, ScanFiling } from '../storage/documents.ts';
import { inSpan, SPAN_NAMES, type SpanAttributes } from '../tracing/spans.ts';
import { yieldToIo } from '../work/yield.ts';
import { checkDocument, type CheckResult } from './checks.ts';

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
  /**
   * Files one document a pushed EMR handed in, as a scan files what it finds (checked, refused with its reason,
   * never a second row for one id); resolves once committed. Content that cannot be read now throws the
   * retryable error, so the EMR is not acknowledged and sends it again.
   */
  fileOne(doc: EmrDocument): Promise<void>;
}

/** One scanned EMR document, checked; 'unavailable' when its content could not be read now. */
type Taken = CheckResult | 'unavailable';

/** A checked document waiting for its transaction. */
interface Filing {
  doc: EmrDocument;
  checked: CheckResult;
  existing: OutboxRow | undefined;
  log: Logger;
  /** The trace context of its `document file` span, stored with a new row. */
  traceContext: string | undefined;
}

/** Requests (in base64 characters) filed in one transaction: fewer commits, yet a bounded hold on memory and on the write lock. */
export const SCAN_FILING_BATCH_CHARS = 4 * 1024 * 1024;

const requestChars = (c: CheckResult): number => (c.ok ? (c.request.file.base64?.length ?? 0) + 1024 : 1024);

/** A filing for the store, and what it means once committed: whether it added a document to send, and what to log. */
function filingOf({ doc, checked, existing, log, traceContext }: Filing): { filing: ScanFiling; added: (changed: boolean) => boolean } {
  if (existing) {
    if (checked.ok) return { filing: { kind: 'requeue', externalId: doc.id, request: checked.request, version: doc.version }, added: (changed) => changed };
    return { filing: { kind: 'rejection', externalId: doc.id, code: checked.code, reason: checked.reason, version: doc.version }, added: () => false };
  }
  const filing: ScanFiling = {
    kind: 'new',
    document: {
      externalId: doc.id,
      documentType: doc.documentType,
      source: 'emr',
      emrDocumentId: doc.id,
      emrVersion: doc.version,
      ...(doc.patient.id ? { emrPatientId: doc.patient.id } : {}),
      ...(checked.ok ? { request: checked.request } : { rejected: { code: checked.code, reason: checked.reason } }),
      traceContext,
    },
  };
  return {
    filing,
    added(created) {
      if (created) log.info({ accepted: checked.ok, ...(checked.ok ? {} : { code: checked.code }) }, 'document taken from the EMR');
      return created;
    },
  };
}

/** `onFiled`: told after each commit that added documents (they can be sent at once). */
export function createScanner(deps: {
  logger: Logger;
  emr: EmrPort;
  outbox: Pick<DocumentStore, 'get' | 'scanWatermark' | 'fileScanned'>;
  onFiled?: () => void;
}): Scanner {
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

  /** Files the documents in one transaction, with the watermark when given; returns how many were added. */
  async function commit(filings: Filing[], watermark?: string): Promise<number> {
    if (!filings.length && !watermark) return 0;
    const planned = filings.map(filingOf);
    const changed = await deps.outbox.fileScanned(
      planned.map((p) => p.filing),
      watermark,
    );
    const added = planned.filter((p, i) => p.added(changed[i]!)).length;
    if (added) deps.onFiled?.();
    return added;
  }

  /** One EMR document to file, its content read and checked in its `document file` span; undefined when it is not to be filed. */
  async function take(doc: EmrDocument, parent?: null): Promise<Filing | 'unavailable' | undefined> {
    const { file, existing } = await toFile(doc);
    if (!file) return undefined;
    const attributes: SpanAttributes = {
      'emr_bridge.document.external_id': doc.id,
      'emr_bridge.document.type': doc.documentType,
      'emr_bridge.document.source': 'emr',
      'emr_bridge.document.emr_id': doc.id,
    };
    return inSpan(
      SPAN_NAMES.documentFile,
      attributes,
      async (span): Promise<Filing | 'unavailable'> => {
        const log = deps.logger.child({ externalId: doc.id, documentType: doc.documentType });
        const checked = await check(doc, log);
        if (checked === 'unavailable') return 'unavailable';
        span.set({ 'emr_bridge.document.status': checked.ok ? 'queued' : 'REJECTED', ...(checked.ok ? {} : { 'emr_bridge.error.code': checked.code }) });
        return { doc, checked, existing, log, traceContext: span.stored() };
      },
      parent === null ? { parent } : {},
    );
  }

  /** Whether this version of a document is to be filed: a new one, or one refused before that the EMR has changed. */
  async function toFile(doc: EmrDocument): Promise<{ file: boolean; existing: OutboxRow | undefined }> {
    const existing = await deps.outbox.get(doc.id);
    // Only a document refused by the local checks is looked at again, once the EMR has changed it.
    return { file: !existing || (existing.state === 'REJECTED' && existing.emr_version !== doc.version), existing };
  }

  return {
    async fileOne(doc) {
      // A document a pushed EMR hands in starts a trace of its own.
      const filing = await take(doc, null);
      if (filing === undefined) return;
      if (filing === 'unavailable') throw new EmrError('emr_unavailable', "the pushed document's content could not be read now");
      await commit([filing]);
    },
    scanOnce() {
      return inSpan(
        SPAN_NAMES.documentScan,
        {},
        async (span) => {
          const added = await scan();
          span.set({ 'emr_bridge.scan.filed': added });
          return added;
        },
        { parent: null },
      );
    },
  };

  async function scan(): Promise<number> {
    const since = await deps.outbox.scanWatermark();
    const { documents, watermark } = await deps.emr.listDocumentsChangedSince(since);
    let added = 0;
    let batch: Filing[] = [];
    let chars = 0;
    let first = true;
    for (const doc of documents) {
      const filing = await take(doc);
      if (filing === undefined) continue;
      // What was read before is filed; the watermark stays, so this document and the rest come again.
      if (filing === 'unavailable') return added + (await commit(batch));
      batch.push(filing);
      chars += requestChars(filing.checked);
      // The first one at once, so that sending starts while the rest are read.
      if (first || chars >= SCAN_FILING_BATCH_CHARS) {
        first = false;
        added += await commit(batch);
        batch = [];
        chars = 0;
      }
      // The rest of the event loop (the sends of documents filed already, webhooks) goes on between two.
      await yieldToIo();
    }
    return added + (await commit(batch, watermark ?? undefined));
  }
}
