// The outbox rows and every change to them. One row per externalId: enqueueing an externalId twice
// returns the first row, which is what makes every retry (and every rescan of the EMR) safe. Sends are
// claimed with the shared lease of ../work/lease.ts.
//
// A row carries its request (a PDF in base64, often 100 KB or more) while it may still be sent, and SQLite
// stores a row's columns in order: reading any column after `request` (state, lease_until, ...) walks the
// request's overflow pages, and changing the row's size rewrites the whole request. So the statements of the
// send path are shaped to touch a queued row as little as they can:
// - a new row is not read back;
// - a new row's lease_until and next_attempt_at are times (its creation: free, and due) rather than NULL and
//   0, so that taking its lease changes no column's size and SQLite overwrites the row in place (the pages
//   that changed) instead of writing it, request and all, again;
// - a claimed row's next_attempt_at is its lease's end, so the due statement, walking the outbox_due index
//   by next_attempt_at, never reaches a row in flight;
// - the outcomes of sends that ended are recorded in one transaction with the next claim (settle): one
//   commit, so one fsync, for all of them;
// - a claimed row comes without its request, and the pusher keeps in memory, parsed, the requests it enqueued
//   and has not sent yet (up to a bound): a send neither reads its request back nor parses it again
//   (requestOf); after a restart, or past the bound, it is read from the row.
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
  /** Until when a send holds the row; free once past (or NULL). */
  lease_until: number | null;
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

/** What became of one send: an outcome (the service's answer, or failed here), or another attempt later. */
export type SendEnd =
  | { externalId: string; outcome: Outcome }
  | { externalId: string; retry: { at: number; code: string; reason: string } }
  /** Claimed but never sent (the pass ended first): the lease is freed and the attempt not counted. */
  | { externalId: string; unsent: true };

/** A row claimed for a send, without its request (see SendQueue.requestOf). */
export type ClaimedRow = Omit<OutboxRow, 'request'>;

/** The send side: rows enter, are claimed with a lease, and take their outcome or a later attempt. */
export interface SendQueue {
  /** Returns the row that stands for the externalId (the first one if it existed). */
  enqueue(e: NewDocument): { row: OutboxRow; created: boolean };
  /**
   * Claims up to `limit` queued rows that are due, with a lease of `leaseMs` (the shared lease rule). The
   * lease's end is also the row's next_attempt_at: not due again before the lease runs out.
   */
  claimDue(limit: number, leaseMs: number): OutboxRow[];
  /** A final row never moves again. */
  recordOutcome(externalId: string, o: Outcome): void;
  retryAt(externalId: string, at: number, code: string, reason: string): void;
  /**
   * Records what became of sends that ended (outcomes and retries, as recordOutcome and retryAt do), then
   * claims up to `limit` more rows as claimDue does: all in one transaction, so one commit. The rows come
   * without their request: requestOf gives it.
   */
  settle(ended: readonly SendEnd[], limit: number, leaseMs: number): ClaimedRow[];
  /** Whether a queued row is due now (by the due index alone, so cheap; a row may still be leased). */
  anyDue(): boolean;
  /**
   * The request of a claimed row, to send: the one enqueued by this process if it is still held in memory
   * (not read back and parsed), else the stored one. Null when the row keeps none (it is final by now).
   */
  requestOf(externalId: string): DocumentRequest | null;
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
  /** Marks a row whose status reached the EMR; a row that changed since is left for its new status. */
  markSynced(r: Pick<OutboxRow, 'external_id' | 'updated_at'>): void;
  /** markSynced for several rows, in one transaction. */
  markAllSynced(rows: readonly Pick<OutboxRow, 'external_id' | 'updated_at'>[]): void;
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

/**
 * `requestMemoryChars`: how much request text (characters of JSON) the send queue may hold in memory, parsed,
 * between the enqueue and the send of a document (the oldest are dropped past it; 0: none, each request is
 * read back and parsed when sent).
 */
export function createOutbox(db: Db, clock: Clock, opts: { requestMemoryChars?: number } = {}): Outbox {
  return { ...createSendQueue(db, clock, opts.requestMemoryChars ?? 0), ...createFollowUps(db, clock), ...createOutboxViews(db) };
}

/** Requests enqueued here and not yet sent, parsed, oldest first, at most `maxChars` of JSON in all. */
function createRequestMemory(maxChars: number) {
  const held = new Map<string, { request: DocumentRequest; chars: number }>();
  let chars = 0;
  const drop = (externalId: string) => {
    const e = held.get(externalId);
    if (!e) return undefined;
    held.delete(externalId);
    chars -= e.chars;
    return e.request;
  };
  return {
    keep(externalId: string, request: DocumentRequest, size: number): void {
      if (size > maxChars) return;
      drop(externalId);
      held.set(externalId, { request, chars: size });
      chars += size;
      for (const oldest of held.keys()) {
        if (chars <= maxChars) break;
        drop(oldest);
      }
    },
    take: drop,
  };
}

/** Every column but `request`, in the table's order: reading them still walks a stored request's pages, but copies none of it. */
const ROW_WITHOUT_REQUEST =
  'external_id, document_type, source, emr_document_id, emr_version, emr_patient_id, state, status_reason, error_code, service_id, patient_service_id, release_after, sent_at, attempts, next_attempt_at, lease_until, next_poll_at, emr_synced, created_at, updated_at';

/**
 * SendQueue.enqueue: a new row, queued or (refused by the checks) REJECTED; the first row for an externalId
 * stands. A new row is returned without reading its request back (the text just written is the request).
 */
function createEnqueue(db: Db, clock: Clock, kept: (externalId: string, request: DocumentRequest, chars: number) => void): SendQueue['enqueue'] {
  const get = db.prepare('SELECT * FROM outbox_documents WHERE external_id = ?');
  const getNew = db.prepare(`SELECT ${ROW_WITHOUT_REQUEST} FROM outbox_documents WHERE external_id = ?`);
  const insert = db.prepare(`
    INSERT INTO outbox_documents (external_id, document_type, source, emr_document_id, emr_version, emr_patient_id, request, state, status_reason, error_code, emr_synced, next_attempt_at, lease_until, created_at, updated_at)
    VALUES (@externalId, @documentType, @source, @emrDocumentId, @emrVersion, @emrPatientId, @request, @state, @reason, @code, @synced, @now, @now, @now, @now)
    ON CONFLICT (external_id) DO NOTHING`);
  return (e) => {
    const request = e.rejected ? null : JSON.stringify(e.request);
    const info = insert.run({
      externalId: e.externalId,
      documentType: e.documentType,
      source: e.source,
      emrDocumentId: e.emrDocumentId ?? null,
      emrVersion: e.emrVersion ?? null,
      emrPatientId: e.emrPatientId ?? null,
      request,
      state: e.rejected ? 'REJECTED' : 'queued',
      reason: e.rejected?.reason ?? null,
      code: e.rejected?.code ?? null,
      synced: e.rejected && e.emrDocumentId ? 0 : 1,
      now: clock.now(),
    });
    if (info.changes !== 1) return { row: get.get(e.externalId) as OutboxRow, created: false };
    if (e.request && request) kept(e.externalId, e.request, request.length);
    return { row: { ...(getNew.get(e.externalId) as Omit<OutboxRow, 'request'>), request }, created: true };
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

function createSendQueue(db: Db, clock: Clock, requestMemoryChars: number): SendQueue {
  // By the outbox_due index, in its order: the first rows due are read, and no others. Left to itself, the
  // planner takes the outbox_state index and sorts, reading every queued row (and its request) per claim.
  const dueWhere =
    "FROM outbox_documents INDEXED BY outbox_due WHERE state = 'queued' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?) ORDER BY next_attempt_at LIMIT ?";
  const due = db.prepare(`SELECT * ${dueWhere}`);
  const dueWithoutRequest = db.prepare(`SELECT ${ROW_WITHOUT_REQUEST} ${dueWhere}`);
  const storedRequest = db.prepare('SELECT request FROM outbox_documents WHERE external_id = ?').pluck();
  // The lease's end is the next attempt's time too: the due statement, walking the outbox_due index by
  // next_attempt_at, then never reaches a row in flight (reading its lease would walk its request's pages).
  const lease = db.prepare(
    "UPDATE outbox_documents SET lease_until = @until, next_attempt_at = @until, attempts = attempts + 1 WHERE external_id = @externalId AND state = 'queued' AND (lease_until IS NULL OR lease_until <= @now)",
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
  const anyDue = db.prepare("SELECT 1 FROM outbox_documents INDEXED BY outbox_due WHERE state = 'queued' AND next_attempt_at <= ? LIMIT 1").pluck();
  const unsent = db.prepare(
    "UPDATE outbox_documents SET lease_until = @now, next_attempt_at = min(next_attempt_at, @now), attempts = max(attempts - 1, 0) WHERE external_id = @externalId AND state = 'queued'",
  );
  // A live lease ends now, and its row is due at once again: it had been due (its next_attempt_at is only
  // its lease's end). A lease that ran out holds nothing (and a new row's lease_until is its creation).
  const releaseLeases = db.prepare(
    "UPDATE outbox_documents SET lease_until = @now, next_attempt_at = min(next_attempt_at, @now) WHERE state = 'queued' AND lease_until > @now",
  );

  const memory = createRequestMemory(requestMemoryChars);
  const enqueue = createEnqueue(db, clock, memory.keep);
  const take = (r: ClaimedRow, until: number, now: number) => lease.run({ until, externalId: r.external_id, now }).changes === 1;
  const claimDue = createLeaseClaim<OutboxRow>(db, clock, { due: (now, limit) => due.all(now, now, limit) as OutboxRow[], take });
  const claimWithoutRequest = createLeaseClaim<ClaimedRow>(db, clock, { due: (now, limit) => dueWithoutRequest.all(now, now, limit) as ClaimedRow[], take });
  const recordOutcome = createOutcomeRecorder(db, clock);
  const retryAt: SendQueue['retryAt'] = (externalId, at, code, reason) => void retry.run(at, code, reason, clock.now(), externalId);
  // The claim's own transaction runs as a savepoint inside this one: one commit in all.
  const settle = db.transaction((ended: readonly SendEnd[], limit: number, leaseMs: number) => {
    for (const e of ended) {
      if ('outcome' in e) recordOutcome(e.externalId, e.outcome);
      else if ('retry' in e) retryAt(e.externalId, e.retry.at, e.retry.code, e.retry.reason);
      else unsent.run({ externalId: e.externalId, now: clock.now() });
    }
    return limit > 0 ? claimWithoutRequest(limit, leaseMs) : [];
  });

  return {
    enqueue,
    claimDue,
    recordOutcome,
    retryAt,
    settle: (ended, limit, leaseMs) => (ended.length || limit > 0 ? settle.immediate(ended, limit, leaseMs) : []),
    anyDue: () => anyDue.get(clock.now()) !== undefined,
    requestOf(externalId) {
      const kept = memory.take(externalId);
      if (kept) return kept;
      const text = storedRequest.get(externalId) as string | null | undefined;
      return text ? (JSON.parse(text) as DocumentRequest) : null;
    },
    resend: (externalId) => resend.run(clock.now(), externalId).changes === 1,
    requeue: (externalId, request, version) => void requeue.run(JSON.stringify(request), version, clock.now(), externalId),
    recordRejection: (externalId, code, reason, version) => void rejection.run(code, reason, version, clock.now(), externalId),
    releaseLeases: () => releaseLeases.run({ now: clock.now() }).changes,
  };
}

function createFollowUps(db: Db, clock: Clock): FollowUps {
  // By the outbox_poll index, as the due statement of the send queue (not every HELD row, sorted, per pass).
  const heldDue = db.prepare("SELECT * FROM outbox_documents INDEXED BY outbox_poll WHERE state = 'HELD' AND next_poll_at <= ? ORDER BY next_poll_at LIMIT ?");
  const poll = db.prepare('UPDATE outbox_documents SET next_poll_at = ? WHERE external_id = ?');
  const unsynced = db.prepare('SELECT * FROM outbox_documents WHERE emr_synced = 0 ORDER BY updated_at LIMIT ?');
  const synced = db.prepare('UPDATE outbox_documents SET emr_synced = 1 WHERE external_id = ? AND updated_at = ?');
  const markAllSynced = db.transaction((rows: readonly Pick<OutboxRow, 'external_id' | 'updated_at'>[]) => {
    for (const r of rows) synced.run(r.external_id, r.updated_at);
  });
  return {
    heldDue: (limit) => heldDue.all(clock.now(), limit) as OutboxRow[],
    pollAgainAt: (externalId, at) => void poll.run(at, externalId),
    unsynced: (limit) => unsynced.all(limit) as OutboxRow[],
    markSynced: (r) => void synced.run(r.external_id, r.updated_at),
    markAllSynced: (rows) => void (rows.length && markAllSynced.immediate(rows)),
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
