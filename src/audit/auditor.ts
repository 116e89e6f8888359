// The audit trail's port: every admin action through any door (the API, the CLI, the console) and every
// failed sign-in is recorded in the database with when, who, what, on which ids, from where and the outcome
// (HIPAA 164.312(b)). Entries hold identifiers only: never a name, phone, label, body, token or key.

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

export interface Auditor {
  record(entry: AuditEntry): Promise<void>;
  /** Newest first. */
  page(q: AuditQuery): Promise<{ entries: AuditRecord[]; next: number | null }>;
}
