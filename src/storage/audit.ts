// The audit trail's store, engine-neutral: entries written once (never updated), read newest first a page at
// a time with filters, and pruned only past the audit's own retention (src/processor/retention.ts says when).
// The entries are what src/audit/ records (its Auditor is the trail's port over this store).

/** How the action reached the adapter: the CLI marks its calls with `x-emr-bridge-source: cli`. */
export type Door = 'api' | 'cli' | 'console';

export type AuditOutcome = 'ok' | 'denied' | 'refused' | 'failed' | 'not_found';

export interface AuditEntry {
  /** The credential's name; `-` for a sign-in that named none that exists. */
  actor: string;
  door: Door;
  /** A stable action name, e.g. `dead_letter.replay`, `document.retry`, `event.body.reveal`, `sign_in`. */
  action: string;
  /** The ids acted on (eventIds, externalIds, `entityType:serviceId`); empty when none. */
  targets: string[];
  /** The client's address as the adapter saw it. */
  from: string;
  outcome: AuditOutcome;
}

export interface AuditRecord extends AuditEntry {
  id: number;
  /** Epoch ms, from the injected clock. */
  at: number;
}

export interface AuditQuery {
  actor?: string;
  action?: string;
  /** Only entries naming this target id. */
  target?: string;
  since?: number;
  until?: number;
  /** Newest first: entries with id below this. */
  before?: number;
  limit: number;
}

export interface AuditStore {
  /** Writes one entry, `at` epoch ms; returns its id (ids only grow, and are never reused). */
  record(entry: AuditEntry & { at: number }): Promise<number>;
  /** Up to `q.limit` entries matching every filter given, newest (highest id) first. */
  page(q: AuditQuery): Promise<AuditRecord[]>;
  /** Deletes the entries (and their targets) written before `before` (epoch ms); says how many. */
  prune(before: number): Promise<number>;
}

/** A stored row, as both engines read it. */
export interface AuditRow {
  id: number;
  at: number;
  actor: string;
  door: string;
  action: string;
  targets: string;
  from_address: string;
  outcome: string;
}

export const toAuditRecord = (r: AuditRow): AuditRecord => ({
  id: Number(r.id),
  at: Number(r.at),
  actor: r.actor,
  door: r.door as AuditRecord['door'],
  action: r.action,
  targets: JSON.parse(r.targets) as string[],
  from: r.from_address,
  outcome: r.outcome as AuditRecord['outcome'],
});
