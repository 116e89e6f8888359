// The audit trail's store, engine-neutral: entries written once (never updated), read newest first a page at
// a time with filters, and pruned only past the audit's own retention (src/processor/retention.ts says when).
import type { AuditEntry, AuditQuery, AuditRecord } from '../audit/auditor.ts';

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
