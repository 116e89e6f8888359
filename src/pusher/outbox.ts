// The outbox rows and every change to them. One row per externalId: enqueueing an externalId twice
// returns the first row, which is what makes every retry (and every rescan of the EMR) safe. Sends are
// claimed with the shared lease of ../work/lease.ts.
import type { Clock } from '../clock.ts';
import type { DocumentRequest, DocumentResource } from '../contract/documents.ts';
import type { DocumentType } from '../contract/events.ts';
import type { Db } from '../database/open.ts';
import { createLeaseClaim } from '../work/lease.ts';

export type OutboxState = 'queued' | 'SENT' | 'HELD' | 'FAILED' | 'SUPPRESSED' | 'REJECTED';

export interface OutboxRow {
  external_id: string;
  document_type: DocumentType;
  source: 'emr' | 'api' | 'cli';
  emr_document_id: string | null;
  emr_version: string | null;
  /** The EMR patient the document is for (documents from the EMR). */
  emr_patient_id: string | null;
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
  next_poll_at: number | null;
  emr_synced: number;
  created_at: number;
  updated_at: number;
}

/**
 * Whether the service has settled the document for good: SENT, SUPPRESSED, or FAILED by the service itself
 * (no local error code). A FAILED row with a local code (retries exhausted, a refused key) never reached a
 * final state at the service and may be sent again; the externalId keeps that safe.
 */
export function isFinal(r: Pick<OutboxRow, 'state' | 'error_code'>): boolean {
  return r.state === 'SENT' || r.state === 'SUPPRESSED' || (r.state === 'FAILED' && r.error_code === null);
}
/** isFinal as SQL, for the statements that must not move a final row. */
const FINAL = "(state IN ('SENT', 'SUPPRESSED') OR (state = 'FAILED' AND error_code IS NULL))";

/** What an admin or the CLI may see of a row: identifiers, status, reasons, times. Never the request. */
export function publicView(r: OutboxRow) {
  return {
    externalId: r.external_id,
    documentType: r.document_type,
    source: r.source,
    status: r.state,
    ...(r.status_reason ? { statusReason: r.status_reason } : {}),
    ...(r.error_code ? { errorCode: r.error_code } : {}),
    ...(r.service_id ? { serviceId: r.service_id } : {}),
    ...(r.release_after ? { releaseAfter: r.release_after } : {}),
    ...(r.sent_at ? { sentAt: r.sent_at } : {}),
    attempts: r.attempts,
    emrDocumentId: r.emr_document_id,
    createdAt: new Date(r.created_at).toISOString(),
    updatedAt: new Date(r.updated_at).toISOString(),
  };
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

/**
 * Retention: deletes rows that are finished (final at the service, or REJECTED here) and whose status has
 * reached the EMR, last changed before the cutoff. Queued, HELD, locally FAILED and unsynced rows stay.
 */
export function createFinishedDocumentPruner(db: Db): (cutoffMs: number) => number {
  const prune = db.prepare(`DELETE FROM outbox_documents WHERE emr_synced = 1 AND updated_at < ? AND (${FINAL} OR state = 'REJECTED')`);
  return (cutoffMs) => prune.run(cutoffMs).changes;
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
}

/** A new status of a row: the service's answer (resource), a local failure (code and reason), when to poll a HELD one. */
export interface Outcome {
  state: OutboxState;
  reason?: string;
  code?: string;
  resource?: DocumentResource;
  nextPollAt?: number;
}

/** The send side: rows enter, are claimed with a lease, and take their outcome or a later attempt. */
export interface SendQueue {
  /** Returns the row that stands for the externalId (the first one if it existed). */
  enqueue(e: NewDocument): { row: OutboxRow; created: boolean };
  /** Claims up to `limit` queued rows that are due, with a lease of `leaseMs` (the shared lease rule). */
  claimDue(limit: number, leaseMs: number): OutboxRow[];
  /** A final row never moves again. */
  recordOutcome(externalId: string, o: Outcome): void;
  retryAt(externalId: string, at: number, code: string, reason: string): void;
  /** Queues a document that failed before the service took it, with fresh attempts. False if it cannot be. */
  resend(externalId: string): boolean;
  /** A REJECTED document the EMR changed, passing the checks now: queued with fresh attempts. */
  requeue(externalId: string, request: DocumentRequest, version: string): void;
  /** A REJECTED document the EMR changed, still refused: the new reason, to be written back. */
  recordRejection(externalId: string, code: string, reason: string, version: string): void;
  /** Frees every send lease (a restart: the process that held them is gone). Returns how many. */
  releaseLeases(): number;
}

/** The follow-up side: HELD rows to poll, statuses to write back to the EMR. */
export interface FollowUps {
  heldDue(limit: number): OutboxRow[];
  pollAgainAt(externalId: string, at: number): void;
  unsynced(limit: number): OutboxRow[];
  markSynced(r: OutboxRow): void;
}

/** What admins, the CLI and metrics read. */
export interface OutboxViews {
  get(externalId: string): OutboxRow | undefined;
  list(state: string | undefined, limit?: number): OutboxRow[];
  /** One page of the newest documents first, filtered; `next` is where the following page starts (null: none). */
  page(f: DocumentFilter): { rows: OutboxRow[]; next: DocumentPosition | null };
  /** When the oldest document not yet sent was made (epoch ms); undefined when none waits. */
  oldestQueuedCreatedAt(): number | undefined;
  openCount(): number;
}

export type Outbox = SendQueue & FollowUps & OutboxViews;

export function createOutbox(db: Db, clock: Clock): Outbox {
  return { ...createSendQueue(db, clock), ...createFollowUps(db, clock), ...createOutboxViews(db) };
}

/** SendQueue.enqueue: a new row, queued or (refused by the checks) REJECTED; the first row for an externalId stands. */
function createEnqueue(db: Db, clock: Clock): SendQueue['enqueue'] {
  const get = db.prepare('SELECT * FROM outbox_documents WHERE external_id = ?');
  const insert = db.prepare(`
    INSERT INTO outbox_documents (external_id, document_type, source, emr_document_id, emr_version, emr_patient_id, request, state, status_reason, error_code, emr_synced, created_at, updated_at)
    VALUES (@externalId, @documentType, @source, @emrDocumentId, @emrVersion, @emrPatientId, @request, @state, @reason, @code, @synced, @now, @now)
    ON CONFLICT (external_id) DO NOTHING`);
  return (e) => {
    const info = insert.run({
      externalId: e.externalId,
      documentType: e.documentType,
      source: e.source,
      emrDocumentId: e.emrDocumentId ?? null,
      emrVersion: e.emrVersion ?? null,
      emrPatientId: e.emrPatientId ?? null,
      request: e.rejected ? null : JSON.stringify(e.request),
      state: e.rejected ? 'REJECTED' : 'queued',
      reason: e.rejected?.reason ?? null,
      code: e.rejected?.code ?? null,
      synced: e.rejected && e.emrDocumentId ? 0 : 1,
      now: clock.now(),
    });
    return { row: get.get(e.externalId) as OutboxRow, created: info.changes === 1 };
  };
}

/** SendQueue.recordOutcome: a row's new status; a final row never moves again. */
function createOutcomeRecorder(db: Db, clock: Clock): SendQueue['recordOutcome'] {
  // Final rows never move again: a late answer (a HELD that crossed a document.delivered) changes nothing.
  // The request is kept while the document may still be sent: queued, or failed before the service took it.
  const outcome = db.prepare(`
    UPDATE outbox_documents SET state = @state, status_reason = @reason, error_code = @code, service_id = coalesce(@serviceId, service_id),
      patient_service_id = coalesce(@patientServiceId, patient_service_id), release_after = @releaseAfter, sent_at = coalesce(@sentAt, sent_at),
      next_poll_at = @nextPollAt, request = CASE WHEN @state = 'queued' OR (@state = 'FAILED' AND @code IS NOT NULL) THEN request ELSE NULL END,
      lease_until = NULL, emr_synced = CASE WHEN emr_document_id IS NULL THEN 1 ELSE 0 END, updated_at = @now
    WHERE external_id = @externalId AND NOT ${FINAL}`);
  return (externalId, o) => {
    outcome.run({
      externalId,
      state: o.state,
      reason: o.reason ?? o.resource?.statusReason ?? null,
      code: o.code ?? null,
      serviceId: o.resource?.serviceId ?? null,
      patientServiceId: o.resource?.patientServiceId ?? null,
      releaseAfter: o.resource?.releaseAfter ?? null,
      sentAt: o.resource?.sentAt ?? null,
      nextPollAt: o.nextPollAt ?? null,
      now: clock.now(),
    });
  };
}

function createSendQueue(db: Db, clock: Clock): SendQueue {
  const due = db.prepare(
    "SELECT * FROM outbox_documents WHERE state = 'queued' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?) ORDER BY next_attempt_at LIMIT ?",
  );
  const lease = db.prepare(
    "UPDATE outbox_documents SET lease_until = ?, attempts = attempts + 1 WHERE external_id = ? AND state = 'queued' AND (lease_until IS NULL OR lease_until <= ?)",
  );
  const retry = db.prepare(
    "UPDATE outbox_documents SET next_attempt_at = ?, lease_until = NULL, error_code = ?, status_reason = ?, updated_at = ? WHERE external_id = ? AND state = 'queued'",
  );
  const resend = db.prepare(`
    UPDATE outbox_documents SET state = 'queued', status_reason = NULL, error_code = NULL, attempts = 0, next_attempt_at = 0, lease_until = NULL, updated_at = ?
    WHERE external_id = ? AND state = 'FAILED' AND error_code IS NOT NULL AND request IS NOT NULL`);
  const requeue = db.prepare(
    "UPDATE outbox_documents SET state = 'queued', request = ?, emr_version = ?, status_reason = NULL, error_code = NULL, attempts = 0, next_attempt_at = 0, emr_synced = 1, updated_at = ? WHERE external_id = ? AND state = 'REJECTED'",
  );
  const rejection = db.prepare(
    "UPDATE outbox_documents SET error_code = ?, status_reason = ?, emr_version = ?, emr_synced = 0, updated_at = ? WHERE external_id = ? AND state = 'REJECTED'",
  );
  const releaseLeases = db.prepare("UPDATE outbox_documents SET lease_until = NULL WHERE state = 'queued' AND lease_until IS NOT NULL");

  return {
    enqueue: createEnqueue(db, clock),
    claimDue: createLeaseClaim(db, clock, {
      due: (now, limit) => due.all(now, now, limit) as OutboxRow[],
      take: (r, until, now) => lease.run(until, r.external_id, now).changes === 1,
    }),
    recordOutcome: createOutcomeRecorder(db, clock),
    retryAt(externalId, at, code, reason) {
      retry.run(at, code, reason, clock.now(), externalId);
    },
    resend: (externalId) => resend.run(clock.now(), externalId).changes === 1,
    requeue: (externalId, request, version) => void requeue.run(JSON.stringify(request), version, clock.now(), externalId),
    recordRejection: (externalId, code, reason, version) => void rejection.run(code, reason, version, clock.now(), externalId),
    releaseLeases: () => releaseLeases.run().changes,
  };
}

function createFollowUps(db: Db, clock: Clock): FollowUps {
  const heldDue = db.prepare("SELECT * FROM outbox_documents WHERE state = 'HELD' AND next_poll_at <= ? ORDER BY next_poll_at LIMIT ?");
  const poll = db.prepare('UPDATE outbox_documents SET next_poll_at = ? WHERE external_id = ?');
  const unsynced = db.prepare('SELECT * FROM outbox_documents WHERE emr_synced = 0 ORDER BY updated_at LIMIT ?');
  const synced = db.prepare('UPDATE outbox_documents SET emr_synced = 1 WHERE external_id = ? AND updated_at = ?');
  return {
    heldDue: (limit) => heldDue.all(clock.now(), limit) as OutboxRow[],
    pollAgainAt: (externalId, at) => void poll.run(at, externalId),
    unsynced: (limit) => unsynced.all(limit) as OutboxRow[],
    markSynced: (r) => void synced.run(r.external_id, r.updated_at),
  };
}

function createOutboxViews(db: Db): OutboxViews {
  const get = db.prepare('SELECT * FROM outbox_documents WHERE external_id = ?');
  const byState = db.prepare('SELECT * FROM outbox_documents WHERE state = ? ORDER BY created_at DESC LIMIT ?');
  const all = db.prepare('SELECT * FROM outbox_documents ORDER BY created_at DESC LIMIT ?');
  const page = db.prepare(`
    SELECT * FROM outbox_documents
    WHERE (@status IS NULL OR state = @status) AND (@type IS NULL OR document_type = @type)
      AND (@since IS NULL OR created_at >= @since) AND (@until IS NULL OR created_at < @until)
      AND (@afterCreated IS NULL OR (created_at, external_id) < (@afterCreated, @afterId))
    ORDER BY created_at DESC, external_id DESC LIMIT @limit`);
  const oldestQueued = db.prepare("SELECT min(created_at) FROM outbox_documents WHERE state = 'queued'").pluck();
  const open = db.prepare("SELECT count(*) FROM outbox_documents WHERE state IN ('queued', 'HELD') OR emr_synced = 0").pluck();
  return {
    get: (externalId) => get.get(externalId) as OutboxRow | undefined,
    list: (state, limit = 200) => (state ? byState.all(state, limit) : all.all(limit)) as OutboxRow[],
    page(f) {
      const rows = page.all({
        status: f.status ?? null,
        type: f.type ?? null,
        since: f.since ?? null,
        until: f.until ?? null,
        afterCreated: f.after?.createdAt ?? null,
        afterId: f.after?.externalId ?? null,
        limit: f.limit + 1,
      }) as OutboxRow[];
      if (rows.length <= f.limit) return { rows, next: null };
      const shown = rows.slice(0, f.limit);
      const last = shown[shown.length - 1]!;
      return { rows: shown, next: { createdAt: last.created_at, externalId: last.external_id } };
    },
    oldestQueuedCreatedAt: () => (oldestQueued.get() as number | null) ?? undefined,
    openCount: () => open.get() as number,
  };
}
