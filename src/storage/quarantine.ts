// The quarantine, engine-neutral: correctly signed webhooks over WEBHOOK_MAX_BODY_BYTES, kept (instead of a 413 the
// service would retry for about 43 hours and then give up) until an operator applies or dismisses them. Bounded:
// an admission that would take the stored bodies past the capacity it is given is refused as `full`. The body is
// sealed for its row (./sealed-contexts.ts QUARANTINE_BODY) by the store, and dropped when the event is applied
// or dismissed; the row stays (identifiers, size, who, when), so a repeat of its eventId is still known.
//
// Apply moves the event into the inbox in one transaction, as if received now (on PostgreSQL with its intake row
// and the wake-up of every replica's processor): the body opened and sealed again for its inbox row, and the
// quarantine row marked applied. Once: a second apply finds it applied. An eventId the inbox holds already (a
// repeat that fitted the limit) is not stored again; the quarantine row is marked applied all the same.
// ./sqlite/quarantine.ts and ./postgres/quarantine.ts implement it; test/storage/quarantine.contract.test.ts
// holds both to it.
import type { Dismissal } from '../work/dismissal.ts';

export type QuarantineState = 'quarantined' | 'applied' | 'dismissed';
export const QUARANTINE_STATES: readonly QuarantineState[] = ['quarantined', 'applied', 'dismissed'];

/** What an operator sees of a quarantined event: identifiers, size and times, never the body. */
export interface QuarantinedEvent {
  eventId: string;
  eventType: string;
  /** The X-Service-* headers as received. */
  headers: Record<string, string>;
  /** Bytes of the body as received. */
  size: number;
  /** Epoch ms. */
  receivedAt: number;
  state: QuarantineState;
  /** Whether the body is still held (until applied or dismissed). */
  bodyStored: boolean;
  applied?: { by: string; at: number };
  dismissal?: Dismissal;
}

/** A webhook to keep: its body in clear (the store seals it). */
export interface QuarantineEntry {
  eventId: string;
  eventType: string;
  headers: Record<string, string>;
  body: Uint8Array;
  /** Epoch ms. */
  receivedAt: number;
}

/**
 * `stored`: kept; `duplicate`: its eventId is in the quarantine already (nothing new kept); `in_inbox`: the inbox
 * holds its eventId (a duplicate as any other); `full`: the bodies held would pass the capacity, nothing kept.
 */
export type Admission = 'stored' | 'duplicate' | 'in_inbox' | 'full';

export type ApplyOutcome =
  /** Moved into the inbox (`stored`), or marked applied because the inbox holds its eventId already (`duplicate`). */
  | { outcome: 'applied'; inbox: 'stored' | 'duplicate'; event: QuarantinedEvent }
  | { outcome: 'not_found' }
  /** Applied or dismissed already: nothing done. */
  | { outcome: 'not_quarantined'; event: QuarantinedEvent }
  /** Larger than the limit it would be received under now: nothing done. */
  | { outcome: 'too_large'; event: QuarantinedEvent };

export interface QuarantinePageQuery {
  state: QuarantineState;
  /** Rows after this position (0: from the start), in arrival order. */
  afterId: number;
  limit: number;
  type?: string;
  /** Epoch ms, on when received; since inclusive, until exclusive. */
  since?: number;
  until?: number;
}

export interface QuarantineUsage {
  /** Events held (state quarantined). */
  events: number;
  /** Bytes of their bodies as stored (sealed): what the capacity bounds. */
  bytes: number;
}

export interface QuarantineStore {
  usage(): Promise<QuarantineUsage>;
  /** Where an eventId is kept already: the inbox, the quarantine (any state), or nowhere. */
  whereIs(eventId: string): Promise<'inbox' | 'quarantine' | undefined>;
  /** Keeps the webhook unless its eventId is known or the bodies held would pass `capacityBytes`. */
  admit(entry: QuarantineEntry, capacityBytes: number): Promise<Admission>;
  page(q: QuarantinePageQuery): Promise<{ id: number; event: QuarantinedEvent }[]>;
  get(eventId: string): Promise<QuarantinedEvent | undefined>;
  /** Into the inbox, received now, if its size is at most `maxBodyBytes`, and only from state quarantined. */
  apply(eventId: string, opts: { maxBodyBytes: number; by: string }): Promise<ApplyOutcome>;
  /** Returns whether it was quarantined (and is now dismissed, its body dropped). */
  dismiss(eventId: string, reason: string, by: string): Promise<boolean>;
  /**
   * Deletes the rows applied or dismissed before the cutoff (epoch ms): their bodies are gone already, and a
   * repeat of their eventId that late is past the service's retries. Never one still quarantined. Says how many.
   */
  prune(before: number): Promise<number>;
}

/** A quarantine row's columns, as both engines read them (never the body itself). */
export interface QuarantineRow {
  id: number;
  event_id: string;
  event_type: string;
  headers: string;
  size: number;
  body_stored: number | boolean;
  received_at: number;
  state: QuarantineState;
  applied_by: string | null;
  applied_at: number | null;
  dismissed_reason: string | null;
  dismissed_by: string | null;
  dismissed_at: number | null;
}

export const QUARANTINE_COLUMNS = `id, event_id, event_type, headers, size, body IS NOT NULL AS body_stored, received_at, state,
  applied_by, applied_at, dismissed_reason, dismissed_by, dismissed_at`;

export const toQuarantinedEvent = (r: QuarantineRow): QuarantinedEvent => ({
  eventId: r.event_id,
  eventType: r.event_type,
  headers: JSON.parse(r.headers) as Record<string, string>,
  size: Number(r.size),
  receivedAt: Number(r.received_at),
  state: r.state,
  bodyStored: Boolean(r.body_stored),
  ...(r.applied_at !== null ? { applied: { by: r.applied_by ?? '', at: Number(r.applied_at) } } : {}),
  ...(r.dismissed_at !== null
    ? { dismissal: { reason: r.dismissed_reason ?? '', by: r.dismissed_by ?? '', at: new Date(Number(r.dismissed_at)).toISOString() } }
    : {}),
});
