// The quarantine as an operator uses it, through the admin API (./quarantine-admin-router.ts) and the console
// (src/console/pages/quarantine.ts) alike: a page of what it holds, apply (into the inbox, once, only when
// WEBHOOK_MAX_BODY_BYTES now lets it in) and dismiss (with a reason, as a dead letter's), each logged with
// identifiers only. The rows are the store's (src/storage/quarantine.ts); the receiver fills it
// (./quarantine-intake.ts).
import { AppError, NotFoundError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ApplyOutcome, QuarantinedEvent, QuarantineState, QuarantineStore, QuarantineUsage } from '../storage/quarantine.ts';

export type { QuarantinedEvent, QuarantineState } from '../storage/quarantine.ts';

export interface QuarantineFilter {
  state: QuarantineState;
  limit: number;
  /** The last row of the previous page (0: from the start). */
  after?: number;
  type?: string;
  since?: number;
  until?: number;
}

export interface Quarantine {
  /** WEBHOOK_MAX_BODY_BYTES now: an event applies only if its size is at most this. */
  readonly maxBodyBytes: number;
  /** WEBHOOK_QUARANTINE_BYTES. */
  readonly capacityBytes: number;
  page(f: QuarantineFilter): Promise<{ events: QuarantinedEvent[]; next: number | null }>;
  usage(): Promise<QuarantineUsage>;
  get(eventId: string): Promise<QuarantinedEvent | undefined>;
  /** Into the inbox, once; throws NotFoundError, or QuarantineRefusal (409 done already, 422 over the limit). */
  apply(eventId: string, by: string): Promise<{ event: QuarantinedEvent; inbox: 'stored' | 'duplicate' }>;
  /** Throws NotFoundError, or QuarantineRefusal (409) when it is not quarantined (applied or dismissed already). */
  dismiss(eventId: string, reason: string, by: string): Promise<QuarantinedEvent>;
}

/** Why an apply or a dismissal was refused: 409 (applied or dismissed already) or 422 (over the limit). */
export class QuarantineRefusal extends AppError {}

const notQuarantined = (e: QuarantinedEvent) =>
  new QuarantineRefusal({
    code: 'not_quarantined',
    status: 409,
    message: e.state === 'applied' ? 'the event was applied already' : 'the event was dismissed; a dismissed event cannot be applied',
  });

/** The refusal of an event over the limit, saying what to do. */
export const overLimit = (e: QuarantinedEvent, maxBodyBytes: number) =>
  new QuarantineRefusal({
    code: 'limit_too_low',
    status: 422,
    message: `the event's body is ${e.size} bytes, over WEBHOOK_MAX_BODY_BYTES (${maxBodyBytes}): raise WEBHOOK_MAX_BODY_BYTES to at least ${e.size} and restart the adapter, then apply it`,
  });

export function createQuarantine(deps: { store: QuarantineStore; maxBodyBytes: number; capacityBytes: number; logger: Logger }): Quarantine {
  const { store, maxBodyBytes, logger } = deps;
  return {
    maxBodyBytes,
    capacityBytes: deps.capacityBytes,
    async page(f) {
      const rows = await store.page({ state: f.state, afterId: f.after ?? 0, limit: f.limit + 1, type: f.type, since: f.since, until: f.until });
      const shown = rows.slice(0, f.limit);
      return { events: shown.map((r) => r.event), next: rows.length > f.limit ? shown[shown.length - 1]!.id : null };
    },
    usage: () => store.usage(),
    get: (eventId) => store.get(eventId),
    async apply(eventId, by) {
      const r: ApplyOutcome = await store.apply(eventId, { maxBodyBytes, by });
      if (r.outcome === 'not_found') throw new NotFoundError('no such quarantined event');
      if (r.outcome === 'not_quarantined') throw notQuarantined(r.event);
      if (r.outcome === 'too_large') throw overLimit(r.event, maxBodyBytes);
      logger.info({ eventId, eventType: r.event.eventType, size: r.event.size, inbox: r.inbox, by }, 'quarantined webhook applied');
      return { event: r.event, inbox: r.inbox };
    },
    async dismiss(eventId, reason, by) {
      const event = await store.get(eventId);
      if (!event) throw new NotFoundError('no such quarantined event');
      if (!(await store.dismiss(eventId, reason, by))) {
        const now = (await store.get(eventId)) ?? event;
        throw new QuarantineRefusal({
          code: 'not_quarantined',
          status: 409,
          message: now.state === 'applied' ? 'the event was applied already' : 'the event is already dismissed',
        });
      }
      logger.info({ eventId, by }, 'quarantined webhook dismissed');
      return (await store.get(eventId))!;
    },
  };
}
