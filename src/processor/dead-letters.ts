// Dead letters: events (and mappings) that could not be applied, kept with their reason until a person
// replays them or dismisses them. Replay puts an event back in its original place in its entity's order,
// with fresh attempts. Dismissal keeps it for good (state 'dismissed', with who, why and when): it is no
// longer listed by default, cannot be replayed and is never pruned. Only identifiers and reasons are
// shown, never bodies. The rows are the store's (src/storage/dead-letters.ts); this pages both kinds together.
import { z } from 'zod';
import type { Logger } from '../logger.ts';
import type { DeadLetterStores, DeadMapping, DeadMappingStore, EventStatus } from '../storage/dead-letters.ts';
import type { ParkedState } from '../work/dismissal.ts';

export type { DeadMapping, EventStatus } from '../storage/dead-letters.ts';
export type { Dismissal, ParkedState } from '../work/dismissal.ts';

/** Where a page of parked items ends: events first (by arrival), then mappings (by entity type and id). */
export const deadLetterPosition = z.union([
  z.strictObject({ events: z.number().int().nonnegative() }),
  z.strictObject({ mappings: z.tuple([z.string(), z.string()]).nullable() }),
]);
export type DeadLetterPosition = z.infer<typeof deadLetterPosition>;

export interface DeadLetterFilter {
  state: ParkedState;
  limit: number;
  after?: DeadLetterPosition;
  /** An event type: only events of it (mappings are not events, so none is listed). */
  type?: string;
  /** Epoch ms, on when an event was received (a mapping queued); since inclusive, until exclusive. */
  since?: number;
  until?: number;
}

export interface DeadLetterPage {
  events: EventStatus[];
  mappings: DeadMapping[];
  next: DeadLetterPosition | null;
}

export interface DeadLetters {
  /** One page of parked events, then mappings, in the given state (dead letters unless told otherwise). */
  page(f: DeadLetterFilter): Promise<DeadLetterPage>;
  get(eventId: string): Promise<EventStatus | undefined>;
  getMapping(entityType: string, serviceId: string): Promise<DeadMapping | undefined>;
  /** Returns whether the event was a dead letter (and is now queued again). */
  replay(eventId: string): Promise<boolean>;
  /** Returns whether the mapping was a dead letter (and is queued to be posted again, with fresh attempts). */
  replayMapping(entityType: string, serviceId: string): Promise<boolean>;
  replayAll(filter?: { eventType?: string }): Promise<{ events: number; mappings: number }>;
  /** Returns whether the event was a dead letter (and is now dismissed). The reason is stored, not logged. */
  dismiss(eventId: string, reason: string, by: string): Promise<boolean>;
  /** The same for a mapping the service refused. */
  dismissMapping(entityType: string, serviceId: string, reason: string, by: string): Promise<boolean>;
}

/** The mappings part of a page: `room` items at most, starting after `after`. */
async function mappingsPart(
  mappings: DeadMappingStore,
  f: DeadLetterFilter,
  after: [string, string] | null,
  room: number,
): Promise<{ rows: DeadMapping[]; next: DeadLetterPosition | null }> {
  // An event type filter names events only.
  if (f.type !== undefined) return { rows: [], next: null };
  const rows = await mappings.page({ state: f.state, after, since: f.since, until: f.until, limit: room + 1 });
  if (rows.length <= room) return { rows, next: null };
  const shown = rows.slice(0, room);
  const last = shown[shown.length - 1];
  return { rows: shown, next: { mappings: last ? [last.entityType, last.serviceId] : after } };
}

/** One page: events first (by arrival), then mappings, `f.limit` items in all. */
async function pageOfParked(stores: DeadLetterStores, f: DeadLetterFilter): Promise<DeadLetterPage> {
  const after = f.after ?? { events: 0 };
  if ('mappings' in after) {
    const part = await mappingsPart(stores.mappings, f, after.mappings, f.limit);
    return { events: [], mappings: part.rows, next: part.next };
  }
  const rows = await stores.events.page({ state: f.state, afterInboxId: after.events, limit: f.limit + 1, type: f.type, since: f.since, until: f.until });
  if (rows.length > f.limit) {
    const shown = rows.slice(0, f.limit);
    return { events: shown.map((r) => r.status), mappings: [], next: { events: shown[shown.length - 1]!.inboxId } };
  }
  const part = await mappingsPart(stores.mappings, f, null, f.limit - rows.length);
  return { events: rows.map((r) => r.status), mappings: part.rows, next: part.next };
}

export function createDeadLetters(deps: { stores: DeadLetterStores; logger: Logger }): DeadLetters {
  const { logger, stores } = deps;
  const { events, mappings } = stores;
  return {
    page: (f) => pageOfParked(stores, f),
    get: (eventId) => events.get(eventId),
    getMapping: (entityType, serviceId) => mappings.get(entityType, serviceId),
    async replay(eventId) {
      const changed = await events.reopen(eventId);
      if (changed) logger.info({ eventId }, 'dead letter replayed');
      return changed;
    },
    async replayMapping(entityType, serviceId) {
      const changed = await mappings.reopen(entityType, serviceId);
      if (changed) logger.info({ entityType, serviceId }, 'dead mapping replayed');
      return changed;
    },
    async replayAll(filter = {}) {
      const replayedEvents = await events.reopenAll(filter.eventType);
      const replayedMappings = filter.eventType ? 0 : await mappings.reopenAll();
      logger.info({ events: replayedEvents, mappings: replayedMappings, eventType: filter.eventType }, 'dead letters replayed');
      return { events: replayedEvents, mappings: replayedMappings };
    },
    async dismiss(eventId, reason, by) {
      const changed = await events.dismiss(eventId, reason, by);
      if (changed) logger.info({ eventId, by }, 'dead letter dismissed');
      return changed;
    },
    async dismissMapping(entityType, serviceId, reason, by) {
      const changed = await mappings.dismiss(entityType, serviceId, reason, by);
      if (changed) logger.info({ entityType, serviceId, by }, 'dead mapping dismissed');
      return changed;
    },
  };
}
