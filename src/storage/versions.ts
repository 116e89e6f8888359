// The newest snapshot applied per entity: what a stale snapshot is judged against. Engine-neutral; each
// engine's implementation (./sqlite/versions.ts, ./postgres/versions.ts) stores it in entity_versions, written
// with the event's applied mark (ProcessingQueue.commit) and never moved back.

export interface AppliedVersion {
  occurredAt: string;
  /** Digest of the snapshot's fields the EMR keeps; null when not recorded. */
  hash: string | null;
}

export interface EntityVersions {
  /** The newest applied version, including one noted but not committed with its event yet. */
  newest(entityKey: string): Promise<AppliedVersion | undefined>;
  /**
   * A snapshot is in the EMR now (a patient inside an appointment event), before its event commits: whoever
   * asks `newest` next for this entity must see it, in this process and (PostgreSQL) in any other replica.
   * Forward only: an older version than the one kept changes nothing.
   */
  note(entityKey: string, v: AppliedVersion, eventId: string): Promise<void>;
}
