// Dead letters, engine-neutral: parked events (processing rows in state dead or dismissed, with their inbox
// row) and parked mappings (mapping_outbox rows likewise), read a page at a time, reopened with fresh
// attempts, or dismissed with who, why and when. Paging both together and the admin's rules are
// src/processor/dead-letters.ts. Only identifiers and reasons are read, never bodies.
import { type Dismissal, type DismissalColumns, type ParkedState, toDismissal } from '../work/dismissal.ts';
import type { EventState } from './processing.ts';

export interface EventStatus {
  eventId: string;
  eventType: string;
  state: EventState | 'received';
  attempts: number;
  lastError?: string;
  receivedAt: string;
  finishedAt?: string;
  dismissal?: Dismissal;
}

export interface DeadEventQuery {
  state: ParkedState;
  /** Events after this inbox id (0: from the start), in arrival order. */
  afterInboxId: number;
  limit: number;
  /** Only events of this type. */
  type?: string;
  /** Epoch ms, on when the event was received; since inclusive, until exclusive. */
  since?: number;
  until?: number;
}

export interface DeadEventStore {
  page(q: DeadEventQuery): Promise<{ inboxId: number; status: EventStatus }[]>;
  /** Any stored event's processing state (not only a parked one's). */
  get(eventId: string): Promise<EventStatus | undefined>;
  /** Puts a dead letter back in its entity's order with fresh attempts; returns whether it was one. */
  reopen(eventId: string): Promise<boolean>;
  /** The same for every dead letter (of one event type); returns how many. */
  reopenAll(eventType: string | undefined): Promise<number>;
  /** Returns whether the event was a dead letter (and is now dismissed). */
  dismiss(eventId: string, reason: string, by: string): Promise<boolean>;
}

export interface DeadMapping {
  entityType: string;
  serviceId: string;
  externalId: string;
  attempts: number;
  lastError?: string;
  dismissal?: Dismissal;
}

export interface DeadMappingQuery {
  state: ParkedState;
  /** The last mapping of the previous page, as [entityType, serviceId]; null: from the start. */
  after: [string, string] | null;
  /** Epoch ms, on when the mapping was queued; since inclusive, until exclusive. */
  since?: number;
  until?: number;
  limit: number;
}

export interface DeadMappingStore {
  page(q: DeadMappingQuery): Promise<DeadMapping[]>;
  get(entityType: string, serviceId: string): Promise<DeadMapping | undefined>;
  /** Puts one dead mapping back in the outbox with fresh attempts, due at once; returns whether it was dead. */
  reopen(entityType: string, serviceId: string): Promise<boolean>;
  /** Puts every dead mapping back in the outbox with fresh attempts; returns how many. */
  reopenAll(): Promise<number>;
  /** Mappings the service refused, waiting for a person (dead, not dismissed); read by their partial index. */
  deadCount(): Promise<number>;
  /** Returns whether the mapping was dead (and is now dismissed). */
  dismiss(entityType: string, serviceId: string, reason: string, by: string): Promise<boolean>;
}

export interface DeadLetterStores {
  events: DeadEventStore;
  mappings: DeadMappingStore;
}

/** A parked event's columns, as both engines read them. */
export interface DeadEventRow extends DismissalColumns {
  inbox_id: number;
  event_id: string;
  event_type: string;
  state: EventState | null;
  attempts: number | null;
  last_error: string | null;
  received_at: number;
  finished_at: number | null;
}

export const toEventStatus = (r: DeadEventRow): EventStatus => ({
  eventId: r.event_id,
  eventType: r.event_type,
  state: r.state ?? 'received',
  attempts: r.attempts ?? 0,
  ...(r.last_error ? { lastError: r.last_error } : {}),
  receivedAt: new Date(Number(r.received_at)).toISOString(),
  ...(r.finished_at ? { finishedAt: new Date(Number(r.finished_at)).toISOString() } : {}),
  ...toDismissal(r),
});

/** A parked mapping's columns, as both engines read them. */
export interface DeadMappingRow extends DismissalColumns {
  entity_type: string;
  service_id: string;
  external_id: string;
  attempts: number;
  last_error: string | null;
}

export const toDeadMapping = (r: DeadMappingRow): DeadMapping => ({
  entityType: r.entity_type,
  serviceId: r.service_id,
  externalId: r.external_id,
  attempts: r.attempts,
  ...(r.last_error ? { lastError: r.last_error } : {}),
  ...toDismissal(r),
});
