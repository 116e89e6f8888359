// The document outbox as the pusher sees it, whatever the engine: one row per externalId from the first check
// to its final status and the write-back of that status to the EMR. Enqueueing an externalId twice returns
// the first row, which is what makes every retry, every rescan of the EMR and every replica safe. Sends are
// claimed with a lease (a live lease is never taken; one that ran out is); a claimed row's next_attempt_at is
// its lease's end, so it is not due again before the lease runs out. The SQLite implementation is in
// ./sqlite/documents.ts, the PostgreSQL one in ./postgres/documents.ts; the contract both keep is
// test/storage/documents-*.contract.test.ts.
import type { DocumentRequest, DocumentResource } from '../contract/documents.ts';
import type { DocumentType } from '../contract/events.ts';
import { createClearSealer, type Sealer } from '../sealing/sealer.ts';

export type OutboxState = 'queued' | 'SENT' | 'HELD' | 'FAILED' | 'SUPPRESSED' | 'REJECTED';

export interface OutboxRow {
  external_id: string;
  document_type: DocumentType;
  source: 'emr' | 'api' | 'cli';
  emr_document_id: string | null;
  emr_version: string | null;
  /** The EMR patient the document is for (documents from the EMR). */
  emr_patient_id: string | null;
  /**
   * The request as stored while the document may still be sent (NULL afterwards): sealed for its row
   * (docs/data-at-rest.md; clear when written before sealing or with DATA_ENCRYPTION=off). requestOf opens it.
   */
  request: string | null;
  state: OutboxState;
  status_reason: string | null;
  error_code: string | null;
  service_id: string | null;
  patient_service_id: string | null;
  release_after: string | null;
  sent_at: string | null;
  attempts: number;
  next_attempt_at: number;
  /** Until when a send holds the row; free once past (or NULL). */
  lease_until: number | null;
  next_poll_at: number | null;
  /** 0 while the current state still has to reach the EMR, else 1. */
  emr_synced: number;
  created_at: number;
  updated_at: number;
  /** Bytes of the decoded file, kept once the request is gone; null when the file came as a URL (or unknown: refused, older rows). */
  document_size: number | null;
  /** SHA-256 of the decoded file (lowercase hex), kept with its size. */
  document_sha256: string | null;
  /** The trace context of its filing (src/tracing/): its send, follow-ups and write-back join that trace. Null: none. */
  trace_context: string | null;
}

/** A row claimed for a send, without its request (see SendQueue.requestOf). */
export type ClaimedRow = Omit<OutboxRow, 'request'>;

/**
 * Whether the service has settled the document for good: SENT, SUPPRESSED, or FAILED by the service itself
 * (no local error code). A FAILED row with a local code (retries exhausted, a refused key) never reached a
 * final state at the service and may be sent again; the externalId keeps that safe.
 */
export function isFinal(r: Pick<OutboxRow, 'state' | 'error_code'>): boolean {
  return r.state === 'SENT' || r.state === 'SUPPRESSED' || (r.state === 'FAILED' && r.error_code === null);
}

/** Where a page of documents ends: the last row shown, in the list's order (newest first). */
export interface DocumentPosition {
  createdAt: number;
  externalId: string;
}

export interface DocumentFilter {
  limit: number;
  after?: DocumentPosition;
  status?: OutboxState;
  type?: DocumentType;
  /** Epoch ms, on created_at; since inclusive, until exclusive. */
  since?: number;
  until?: number;
}

/** What enters the outbox: a document from the EMR (maybe refused by the local checks), the admin API or the CLI. */
export interface NewDocument {
  externalId: string;
  documentType: DocumentType;
  source: OutboxRow['source'];
  emrDocumentId?: string;
  emrVersion?: string;
  emrPatientId?: string;
  request?: DocumentRequest;
  rejected?: { code: string; reason: string };
  /** The trace context of the span that filed it (a scan's `document file`, the admin API's). */
  traceContext?: string | undefined;
}

/** A new status of a row: the service's answer (resource), a local failure (code and reason), when to poll a HELD one. */
export interface Outcome {
  state: OutboxState;
  reason?: string;
  code?: string;
  resource?: DocumentResource;
  nextPollAt?: number;
}

/**
 * What became of one send. An outcome (the service's answer, or failed here) is recorded whoever holds the
 * row now: it is the document's status. A retry or a send that never started names the lease it was claimed
 * with (the row's lease_until then): once that lease ran out and someone else claimed the row, it changes
 * nothing, so that it never frees or moves another sender's live lease.
 */
export type SendEnd =
  | { externalId: string; outcome: Outcome }
  | { externalId: string; leaseUntil: number; retry: { at: number; code: string; reason: string } }
  /** Claimed but never sent (the pass ended first, or too little of its lease was left): the lease is freed and the attempt not counted. */
  | { externalId: string; leaseUntil: number; unsent: true };

/** The send side: rows enter, are claimed with a lease, and take their outcome or a later attempt. */
export interface SendQueue {
  /** Returns the row that stands for the externalId (the first one if it existed; `created` false then). */
  enqueue(e: NewDocument): Promise<{ row: OutboxRow; created: boolean }>;
  /**
   * Claims up to `limit` queued rows that are due and whose lease is free or ran out, with a lease of
   * `leaseMs`; each claim counts an attempt. The lease's end is also the row's next_attempt_at.
   */
  claimDue(limit: number, leaseMs: number): Promise<OutboxRow[]>;
  /** A row's new status; a final row never moves again. */
  recordOutcome(externalId: string, o: Outcome): Promise<void>;
  /**
   * Records what became of sends that ended, then claims up to `limit` more rows as claimDue does: all in one
   * transaction, so one commit. The rows come without their request: requestOf gives it.
   */
  settle(ended: readonly SendEnd[], limit: number, leaseMs: number): Promise<ClaimedRow[]>;
  /** Whether a queued row may be due now (cheap; the row may still be leased). */
  anyDue(): Promise<boolean>;
  /**
   * The request of a claimed row, to send (opened and parsed). Null when the row keeps none (it is final by
   * now). A request's text never changes while its row may be sent, so an implementation may hand back the
   * object it was enqueued with instead of reading the row. Rejects with the sealing error (DataKeyMissingError,
   * SealedValueInvalidError, SealedValueMisplacedError) when the stored request does not open.
   */
  requestOf(externalId: string): Promise<DocumentRequest | null>;
  /** Queues a document that failed before the service took it, with fresh attempts. False if it cannot be. */
  resend(externalId: string): Promise<boolean>;
  /**
   * At start: frees the send leases that only a process that stopped can hold, and says how many. With one
   * process per database (SQLite) that is every lease; with replicas sharing one (PostgreSQL) it is none:
   * a live replica's lease is never taken, and a dead one's runs out and is claimed then.
   */
  releaseLeases(): Promise<number>;
}

/** The follow-up side: HELD rows to poll, statuses to write back to the EMR. */
export interface FollowUps {
  /** HELD rows whose poll is due, in poll order. */
  heldDue(limit: number): Promise<OutboxRow[]>;
  pollAgainAt(externalId: string, at: number): Promise<void>;
  /** Rows whose status has not reached the EMR yet, oldest change first. */
  unsynced(limit: number): Promise<OutboxRow[]>;
  /** Marks a row whose status reached the EMR; a row that changed since is left for its new status. */
  markSynced(r: Pick<OutboxRow, 'external_id' | 'updated_at'>): Promise<void>;
  /** markSynced for several rows, in one transaction. */
  markAllSynced(rows: readonly Pick<OutboxRow, 'external_id' | 'updated_at'>[]): Promise<void>;
}

/**
 * What a document's history records: queued or REJECTED when it entered, retrying (a send that failed, with its
 * attempt and error code), the service's answers (HELD, SENT, FAILED, SUPPRESSED), FAILED here, retried (a
 * person sent it again), queued or REJECTED again when the EMR changed a REJECTED one.
 */
export type DocumentHistoryStatus = OutboxState | 'retrying' | 'retried';

export interface DocumentHistoryEntry {
  /** Epoch ms. */
  at: number;
  status: DocumentHistoryStatus;
  /** The send attempt, for a send's outcome or retry; null otherwise. */
  attempt: number | null;
  /** An error code, or the status reason; null when none. */
  detail: string | null;
}

/** What the history says of a document the EMR changed after it was REJECTED, now passing the checks. */
export const CHANGED_IN_EMR = 'changed in the EMR';

/** What admins, the CLI and metrics read. */
export interface OutboxViews {
  get(externalId: string): Promise<OutboxRow | undefined>;
  /** Every status the document went through, oldest first (written with each change, in its transaction). */
  history(externalId: string): Promise<DocumentHistoryEntry[]>;
  list(state: OutboxState | undefined, limit?: number): Promise<OutboxRow[]>;
  /** One page of the newest documents first, filtered; `next` is where the following page starts (null: none). */
  page(f: DocumentFilter): Promise<{ rows: OutboxRow[]; next: DocumentPosition | null }>;
  /** When the oldest document not yet sent was made (epoch ms); undefined when none waits. */
  oldestQueuedCreatedAt(): Promise<number | undefined>;
  /** Rows still to be worked: queued, HELD, or a status not yet in the EMR. */
  openCount(): Promise<number>;
  /** How many rows are in each state (the states with none left out). */
  countByState(): Promise<{ state: OutboxState; count: number }[]>;
}

/** What the EMR scan files: a new document, or a new version of one the local checks refused before. */
export type ScanFiling =
  | { kind: 'new'; document: NewDocument }
  /** A REJECTED document the EMR changed, passing the checks now: queued with fresh attempts. */
  | { kind: 'requeue'; externalId: string; request: DocumentRequest; version: string }
  /** A REJECTED document the EMR changed, still refused: the new reason, to be written back. */
  | { kind: 'rejection'; externalId: string; code: string; reason: string; version: string };

/** How far the EMR scan has read, and what it files. */
export interface ScanLedger {
  scanWatermark(): Promise<string | undefined>;
  /**
   * Files a scan's documents in one transaction, with the new watermark when given. Says of each filing
   * whether it changed the outbox: a new row (false: the externalId had one), a row queued again or a new
   * rejection recorded (false: the row was no longer REJECTED).
   */
  fileScanned(filings: readonly ScanFiling[], watermark?: string): Promise<boolean[]>;
}

/** A document.delivered / document.failed event for a document this outbox never sent, kept for a person. */
export interface UnmatchedDocumentEvent {
  eventId: string;
  externalId: string;
  status: string;
  occurredAt: string;
}

export interface DocumentStore extends SendQueue, FollowUps, OutboxViews, ScanLedger {
  /** Keeps an event about a document this outbox does not have (once per eventId). */
  recordUnmatchedEvent(e: UnmatchedDocumentEvent): Promise<void>;
  /**
   * Retention: deletes rows that are finished (final at the service, or REJECTED here) and whose status has
   * reached the EMR, last changed before the cutoff, with their history; says how many. Queued, HELD, locally
   * FAILED and unsynced rows stay.
   */
  pruneFinished(cutoffMs: number): Promise<number>;
}

export interface DocumentStoreOptions {
  /**
   * How much request text (characters of JSON) may be held in memory, parsed, between the enqueue of a
   * document here and its send (the oldest dropped past it; 0: none, each request is read back and parsed).
   */
  requestMemoryChars?: number;
}

/**
 * By default the requests of documents queued here and not yet sent are kept in memory up to this much JSON
 * (a few hundred 100 KB documents): a send then neither reads its request back nor parses it.
 */
export const DEFAULT_REQUEST_MEMORY_CHARS = 64 * 1024 * 1024;

/**
 * A document store's sealer and options from its factory's arguments: `(sealer?, opts?)`, or the older
 * `(opts)`; no sealer writes requests in clear (createClearSealer), and opens only clear ones.
 */
export function storeSettings(
  sealerOrOpts: Sealer | DocumentStoreOptions | undefined,
  opts: DocumentStoreOptions = {},
): { sealer: Sealer; opts: DocumentStoreOptions } {
  const isSealer = (x: Sealer | DocumentStoreOptions | undefined): x is Sealer => typeof (x as Sealer | undefined)?.openText === 'function';
  if (isSealer(sealerOrOpts)) return { sealer: sealerOrOpts, opts };
  return { sealer: createClearSealer(), opts: sealerOrOpts ?? opts };
}

/** The columns an outcome sets, as values (null: none); a status reason defaults to the service's. */
export function outcomeValues(o: Outcome) {
  return {
    state: o.state,
    reason: o.reason ?? o.resource?.statusReason ?? null,
    code: o.code ?? null,
    serviceId: o.resource?.serviceId ?? null,
    patientServiceId: o.resource?.patientServiceId ?? null,
    releaseAfter: o.resource?.releaseAfter ?? null,
    sentAt: o.resource?.sentAt ?? null,
    nextPollAt: o.nextPollAt ?? null,
  };
}
