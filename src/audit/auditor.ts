// The audit trail's port: every admin action through any door (the API, the CLI, the console) and every
// failed sign-in is recorded in the database with when, who, what, on which ids, from where and the outcome
// (HIPAA 164.312(b)). Entries hold identifiers only: never a name, phone, label, body, token or key. An entry's
// shape (AuditEntry, its Door and AuditOutcome) is defined with the store that keeps it, src/storage/audit.ts.
import type { AuditEntry, AuditQuery, AuditRecord } from '../storage/audit.ts';

export interface Auditor {
  record(entry: AuditEntry): Promise<void>;
  /** Newest first. */
  page(q: AuditQuery): Promise<{ entries: AuditRecord[]; next: number | null }>;
}
