// The crosswalk's rows (docs/crosswalk.md), engine-neutral: the EMR record of each service patient, doctor and
// location the adapter may not create or a person mapped, the records events lack (unmapped rows), and the events
// waiting for them (crosswalk_waits, written with the waiting outcome: ./processing.ts). A mapping set here wakes
// the events waiting for it in the same transaction and, when it is news to the service, queues it in the mapping
// outbox there too. Only src/crosswalk/ writes through this. Implementations: ./sqlite/crosswalk.ts,
// ./postgres/crosswalk.ts.
import type { LackedRecord } from './processing.ts';

export const CROSSWALK_ENTITY_TYPES = ['patient', 'doctor', 'location'] as const;
export type CrosswalkEntityType = (typeof CROSSWALK_ENTITY_TYPES)[number];

/** Who set a mapping: a person (one at a time, or a CSV import), the service's snapshot (externalId), or the EMR (found by identifier). */
export const CROSSWALK_SOURCES = ['operator', 'import', 'service', 'emr'] as const;
export type CrosswalkSource = (typeof CROSSWALK_SOURCES)[number];

export interface CrosswalkItem {
  entityType: CrosswalkEntityType;
  serviceId: string;
  /** A doctor's or location's name as the service sent it; null for a patient (never stored). */
  name: string | null;
  /** Null while unmapped. */
  emrId: string | null;
  source: CrosswalkSource | null;
  /** Events waiting that lack this record. */
  waitingEvents: number;
  /** Epoch ms: when the oldest of those began to wait; null when none waits. */
  waitingSince: number | null;
  /** Epoch ms. */
  updatedAt: number;
}

/** A record an event lacks, with the name the event gave it (a patient's is never kept). */
export interface NeededRecord extends LackedRecord {
  name: string | null;
}

export interface CrosswalkQuery {
  entityType?: CrosswalkEntityType;
  state?: 'mapped' | 'unmapped';
  /** Rows after this one, in (entityType, serviceId) order. */
  after?: LackedRecord;
  limit: number;
}

/** Waiting events per entity type, for the gauge and /admin/status. */
export interface WaitingSummary {
  entityType: CrosswalkEntityType;
  events: number;
  /** Epoch ms: when the oldest began to wait; null when none. */
  oldestSince: number | null;
}

export interface CrosswalkStore {
  /** The EMR ids mapped for these records, keyed `entityType:serviceId` (one read). */
  mapped(records: readonly LackedRecord[]): Promise<Map<string, string>>;
  get(record: LackedRecord): Promise<CrosswalkItem | undefined>;
  /** Lists records events lack as unmapped (a mapped row is left as it is; a name given is kept). */
  need(records: readonly NeededRecord[]): Promise<void>;
  /**
   * Maps the record to `emrId` (a row is made when there is none). `post`: the service is told through the
   * mapping outbox (queued again only when it names another EMR id than the one queued before). The events waiting
   * for it are due again, in the same transaction. Returns how many were woken.
   */
  set(record: LackedRecord, emrId: string, source: CrosswalkSource, opts: { post: boolean }): Promise<{ woken: number }>;
  /** Removes the mapping (and the row); returns whether there was one. Waiting events stay waiting. */
  remove(record: LackedRecord): Promise<boolean>;
  /** The service ids of `entityType` mapped to `emrId`. */
  holdersOf(entityType: CrosswalkEntityType, emrId: string): Promise<string[]>;
  list(q: CrosswalkQuery): Promise<CrosswalkItem[]>;
  /** Every mapped row, in (entityType, serviceId) order: the CSV export. */
  allMapped(): Promise<{ entityType: CrosswalkEntityType; serviceId: string; emrId: string }[]>;
  /**
   * Makes due again every waiting event whose lacked records are all mapped now: the backstop for a mapping that
   * landed on another replica, or between an event's decision to wait and its commit. Returns how many.
   */
  wakeMapped(): Promise<number>;
  waiting(): Promise<WaitingSummary[]>;
  /** The inbox id of the newest event waiting for this record; undefined when none waits (a patient's suggestions read its snapshot). */
  newestWaiter(record: LackedRecord): Promise<number | undefined>;
}

export const recordKey = (r: LackedRecord): string => `${r.entityType}:${r.serviceId}`;

/** The columns both engines read for a CrosswalkItem (the waits counted per row). */
export const CROSSWALK_ITEM_SQL = `SELECT c.entity_type, c.service_id, c.name, c.emr_id, c.source, c.updated_at,
    (SELECT count(*) FROM crosswalk_waits w WHERE w.entity_type = c.entity_type AND w.service_id = c.service_id) AS waiting_events,
    (SELECT min(w.since) FROM crosswalk_waits w WHERE w.entity_type = c.entity_type AND w.service_id = c.service_id) AS waiting_since
  FROM crosswalk c`;

export interface CrosswalkRow {
  entity_type: string;
  service_id: string;
  name: string | null;
  emr_id: string | null;
  source: string | null;
  updated_at: number | string;
  waiting_events: number | string;
  waiting_since: number | string | null;
}

export const toCrosswalkItem = (r: CrosswalkRow): CrosswalkItem => ({
  entityType: r.entity_type as CrosswalkEntityType,
  serviceId: r.service_id,
  name: r.name,
  emrId: r.emr_id,
  source: r.source as CrosswalkSource | null,
  waitingEvents: Number(r.waiting_events),
  waitingSince: r.waiting_since === null ? null : Number(r.waiting_since),
  updatedAt: Number(r.updated_at),
});

/** The WHERE of a list query, with its parameters in order (each engine numbers the placeholders its own way). */
export function crosswalkListSql(q: CrosswalkQuery, placeholder: () => string): { where: string; params: unknown[] } {
  const terms: string[] = [];
  const params: unknown[] = [];
  if (q.entityType) {
    terms.push(`c.entity_type = ${placeholder()}`);
    params.push(q.entityType);
  }
  if (q.state === 'mapped') terms.push('c.emr_id IS NOT NULL');
  if (q.state === 'unmapped') terms.push('c.emr_id IS NULL');
  if (q.after) {
    terms.push(`(c.entity_type > ${placeholder()} OR (c.entity_type = ${placeholder()} AND c.service_id > ${placeholder()}))`);
    params.push(q.after.entityType, q.after.entityType, q.after.serviceId);
  }
  return { where: terms.length ? `WHERE ${terms.join(' AND ')}` : '', params };
}
