// What the operator console reads and does, as one port: the console's pages (src/console/) render what
// this gives, and its actions go through the same operations as the admin API, each recorded in the audit
// trail by the caller. Built in the composition root from the storage, the status and the workers.
import type { Actor } from '../actor.ts';
import type { Door } from '../storage/audit.ts';

export interface ComponentState {
  name: string;
  ok: boolean;
  reason?: string;
  /** Epoch ms since when it is in this state. */
  since?: number;
  /** In planned downtime now (the EMR): until when (epoch ms) and why. */
  downtime?: { until: number; reason: string };
}

export interface MinuteCount {
  /** Epoch ms of the minute's start. */
  minute: number;
  /** Webhooks stored in the inbox (acknowledged) in the minute, taken in by the processor or not. */
  received: number;
  applied: number;
}

export interface Overview {
  components: ComponentState[];
  /** The inbox backlog: events received (acknowledged) and not yet taken in by the processor, or not yet final. */
  inboxDepth: number;
  /** Epoch ms the oldest of them was received; null when there is none. */
  inboxOldestAt: number | null;
  /** How long the oldest of them has waited (ms), at the time of reading; null when there is none. */
  inboxAgeMs: number | null;
  /** Dead letters that are events. */
  deadLetters: number;
  /**
   * Events waiting for a person to map a record the EMR owns (the crosswalk's "Needs mapping"): how many, when the
   * oldest began to wait and how long ago that is (null when none waits); absent without a crosswalk.
   */
  waiting?: { events: number; oldestSince: number | null; ageMs: number | null };
  /** Signed webhooks over WEBHOOK_MAX_BODY_BYTES waiting in the quarantine; absent without one. */
  quarantined?: number;
  /** Dead letters that are mappings the service refused (404, 409). */
  deadMappings: number;
  documentsByStatus: Record<string, number>;
  /** Acknowledgement latency of webhooks over the adapter's uptime (from its metrics); null before the first. */
  ackLatencyMs: { p50: number; p99: number } | null;
  /** The last 24 hours, one entry per minute, oldest first (minutes with nothing are zeros). */
  perMinute: MinuteCount[];
  /** Incidents open now (a component not ok), as `/admin/status` gives them. */
  openAlerts: ComponentState[];
}

export interface EventQuery {
  eventId?: string;
  eventType?: string;
  /** The serviceId of the entity the event is about. */
  serviceId?: string;
  state?: string;
  /** Epoch ms, on when received: since inclusive, until exclusive. */
  since?: number;
  until?: number;
  /** Opaque position from a previous page. */
  after?: string;
  limit: number;
}

export interface EventSummary {
  eventId: string;
  eventType: string;
  entityKey: string | null;
  state: string;
  attempts: number;
  receivedAt: number;
  finishedAt: number | null;
}

export interface EventDetail extends EventSummary {
  /** The X-Service-* headers as received (no body). */
  headers: Record<string, string>;
  /** Every state it went through, oldest first. */
  history: { at: number; state: string; attempt: number; reason: string | null }[];
  /** The EMR records it wrote or claimed, as the EMR names them (`Patient/123`), once applied. */
  emrRefs: string[];
  lastError: string | null;
  /** Whether the body is still stored (retention prunes it). */
  bodyStored: boolean;
  /** The trace id of its receipt, when it was received with tracing on (docs/operations.md#traces). */
  traceId?: string;
}

export interface DocumentSummary {
  externalId: string;
  documentType: string;
  status: string;
  errorCode: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface DocumentDetail extends DocumentSummary {
  serviceId: string | null;
  /** The file's size in bytes and SHA-256 (hex), kept once its bytes are removed; absent when unknown (a file by URL). */
  file?: { size: number; sha256: string };
  /** From the EMR to its final status, oldest first. */
  history: { at: number; status: string; detail: string | null }[];
  /** Whether `retry` is allowed now (FAILED locally, or as the admin API allows). */
  retryable: boolean;
}

export interface MappingView {
  entityType: string;
  serviceId: string;
  emrId: string;
  /** Whether the service has been told (the mapping outbox). */
  posted: boolean;
}

/** A mapping the service refused (a dead letter of the mapping outbox). */
export interface DeadMappingView {
  entityType: string;
  serviceId: string;
  /** The EMR's id the adapter tried to post. */
  externalId: string;
  attempts: number;
  /** The service's refusal: code and message. */
  reason: string | null;
}

export interface Page<T> {
  rows: T[];
  next: string | null;
}

export interface ConsoleData {
  overview(): Promise<Overview>;
  events(q: EventQuery): Promise<Page<EventSummary>>;
  event(eventId: string): Promise<EventDetail | undefined>;
  /** The stored body as text; null when pruned. The caller checks the role and records the reveal. */
  eventBody(eventId: string): Promise<string | null>;
  deadLetters(q: { eventType?: string; after?: string; limit: number }): Promise<Page<EventSummary & { reason: string | null }>>;
  /** Mappings the service refused, by entity type and serviceId. */
  deadMappings(q: { after?: string; limit: number }): Promise<Page<DeadMappingView>>;
  documents(q: { status?: string; after?: string; limit: number }): Promise<Page<DocumentSummary>>;
  document(externalId: string): Promise<DocumentDetail | undefined>;
  /** By serviceId or by EMR id (`Patient/123` or the bare id). */
  mappings(q: { serviceId?: string; emrId?: string }): Promise<MappingView[]>;
}

/** What an operator can do from the console; the same operations as the admin API's. */
export interface ConsoleActions {
  replay(eventIds: readonly string[]): Promise<{ replayed: string[]; notDead: string[] }>;
  replayAllOfType(eventType: string): Promise<{ events: number }>;
  /** Whether the mapping was a dead letter (and is queued to be posted again). */
  replayMapping(entityType: string, serviceId: string): Promise<boolean>;
  /** Whether the mapping was a dead letter (and is now dismissed, with the reason and who). */
  dismissMapping(entityType: string, serviceId: string, reason: string, by: string): Promise<boolean>;
  retryDocument(externalId: string): Promise<{ ok: boolean; reason?: string }>;
}

/** Who acts, and through which door: given to whatever records the action. */
export interface ActingAs {
  actor: Actor;
  door: Door;
  from: string;
}
