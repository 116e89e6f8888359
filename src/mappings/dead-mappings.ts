// Mappings the service refused, as the dead-letter admin sees them: listed a page at a time (by entity type
// and id), shown one by one, reopened in bulk with fresh attempts, or dismissed with a reason. Only
// identifiers and reasons are shown.
import type { Clock } from '../clock.ts';
import type { Db } from '../database/open.ts';
import { toDismissal, type Dismissal, type DismissalColumns, type ParkedState } from '../work/dismissal.ts';

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

export interface DeadMappings {
  page(q: DeadMappingQuery): DeadMapping[];
  get(entityType: string, serviceId: string): DeadMapping | undefined;
  /** Puts every dead mapping back in the outbox with fresh attempts; returns how many. */
  reopenAll(): number;
  /** Returns whether the mapping was dead (and is now dismissed). */
  dismiss(entityType: string, serviceId: string, reason: string, by: string): boolean;
}

interface MappingRow extends DismissalColumns {
  entity_type: string;
  service_id: string;
  external_id: string;
  attempts: number;
  last_error: string | null;
}

const toMapping = (r: MappingRow): DeadMapping => ({
  entityType: r.entity_type,
  serviceId: r.service_id,
  externalId: r.external_id,
  attempts: r.attempts,
  ...(r.last_error ? { lastError: r.last_error } : {}),
  ...toDismissal(r),
});

export function createDeadMappings(db: Db, clock: Clock): DeadMappings {
  const columns = 'entity_type, service_id, external_id, attempts, last_error, dismissed_reason, dismissed_by, dismissed_at';
  const page = db.prepare(`
    SELECT ${columns} FROM mapping_outbox
    WHERE state = @state AND (@afterType IS NULL OR (entity_type, service_id) > (@afterType, @afterId))
      AND (@since IS NULL OR created_at >= @since) AND (@until IS NULL OR created_at < @until)
    ORDER BY entity_type, service_id LIMIT @limit`);
  const one = db.prepare(`SELECT ${columns} FROM mapping_outbox WHERE entity_type = ? AND service_id = ?`);
  const reopenAll = db.prepare("UPDATE mapping_outbox SET state = 'pending', attempts = 0, next_attempt_at = 0 WHERE state = 'dead'");
  const dismiss = db.prepare(`
    UPDATE mapping_outbox SET state = 'dismissed', dismissed_reason = @reason, dismissed_by = @by, dismissed_at = @now
    WHERE state = 'dead' AND entity_type = @entityType AND service_id = @serviceId`);
  return {
    page: (q) =>
      (
        page.all({
          state: q.state,
          afterType: q.after?.[0] ?? null,
          afterId: q.after?.[1] ?? null,
          since: q.since ?? null,
          until: q.until ?? null,
          limit: q.limit,
        }) as MappingRow[]
      ).map(toMapping),
    get(entityType, serviceId) {
      const r = one.get(entityType, serviceId) as MappingRow | undefined;
      return r && toMapping(r);
    },
    reopenAll: () => reopenAll.run().changes,
    dismiss: (entityType, serviceId, reason, by) => dismiss.run({ entityType, serviceId, reason, by, now: clock.now() }).changes === 1,
  };
}
