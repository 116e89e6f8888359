// The claim side of processing: which EMR record belongs to each service entity (emr_mappings), and the
// durable outbox that posts each new mapping back to the service until it succeeds. A 409
// mapping_conflict (or any other permanent refusal) parks the mapping as dead with one alert.
import type { Clock } from '../clock.ts';
import type { MappingEntityType } from '../contract/api.ts';
import type { Db } from '../database/open.ts';
import { describeError, isRetryable } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ServiceClient } from '../service-client/client.ts';
import { backoffDelay, type BackoffSettings } from '../work/backoff.ts';

export interface MappingStore {
  find(entityType: MappingEntityType, serviceId: string): string | undefined;
  /** Records the EMR id of a service entity; the first record wins. Returns the id that stands. */
  record(entityType: MappingEntityType, serviceId: string, emrId: string): string;
  /** Queues the mapping for the service (inside the caller's transaction). Idempotent. */
  enqueue(entityType: MappingEntityType, serviceId: string, externalId: string): void;
}

export function createMappingStore(db: Db, clock: Clock): MappingStore {
  const find = db.prepare('SELECT emr_id FROM emr_mappings WHERE entity_type = ? AND service_id = ?').pluck();
  const insert = db.prepare('INSERT INTO emr_mappings (entity_type, service_id, emr_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING');
  const enqueue = db.prepare(
    'INSERT INTO mapping_outbox (entity_type, service_id, external_id, updated_at, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
  );
  return {
    find: (t, s) => find.get(t, s) as string | undefined,
    record(t, s, emrId) {
      insert.run(t, s, emrId, clock.now());
      return find.get(t, s) as string;
    },
    enqueue: (t, s, externalId) => {
      const now = clock.now();
      enqueue.run(t, s, externalId, now, now);
    },
  };
}

interface OutboxRow {
  entity_type: MappingEntityType;
  service_id: string;
  external_id: string;
  attempts: number;
}

export interface MappingOutbox {
  /** Posts what is due now; returns how many reached a final state. */
  runOnce(): Promise<number>;
  pending(): number;
}

export function createMappingOutbox(deps: {
  db: Db;
  clock: Clock;
  logger: Logger;
  serviceClient: Pick<ServiceClient, 'putMapping'>;
  backoff: BackoffSettings;
  random: () => number;
  onAlert: () => void;
}): MappingOutbox {
  const { db, clock, logger } = deps;
  const due = db.prepare(
    "SELECT entity_type, service_id, external_id, attempts FROM mapping_outbox WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT 20",
  );
  const done = db.prepare("UPDATE mapping_outbox SET state = ?, attempts = attempts + 1, last_error = ?, updated_at = ? WHERE entity_type = ? AND service_id = ?");
  const retry = db.prepare(
    "UPDATE mapping_outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ?, updated_at = ? WHERE entity_type = ? AND service_id = ?",
  );
  const pending = db.prepare("SELECT count(*) FROM mapping_outbox WHERE state = 'pending'").pluck();

  return {
    pending: () => pending.get() as number,
    async runOnce() {
      const rows = due.all(clock.now()) as OutboxRow[];
      let finished = 0;
      await Promise.all(
        rows.map(async (r) => {
          const log = logger.child({ entityType: r.entity_type, serviceId: r.service_id, attempt: r.attempts + 1 });
          try {
            await deps.serviceClient.putMapping(r.entity_type, r.service_id, r.external_id);
            done.run('sent', null, clock.now(), r.entity_type, r.service_id);
            finished++;
            log.debug('mapping posted');
          } catch (err) {
            const d = describeError(err);
            const reason = `${d.code ?? d.type}: ${d.message}`;
            if (isRetryable(err)) {
              retry.run(clock.now() + backoffDelay(r.attempts + 1, deps.backoff, deps.random), reason, clock.now(), r.entity_type, r.service_id);
              log.warn({ code: d.code }, 'mapping post failed; will retry');
            } else {
              done.run('dead', reason, clock.now(), r.entity_type, r.service_id);
              finished++;
              deps.onAlert();
              log.error({ alert: true, code: d.code }, 'mapping refused by the service; parked as a dead letter');
            }
          }
        }),
      );
      return finished;
    },
  };
}

/** Read-only views of the mapping outbox, for metrics: how many mappings wait, and since when the oldest does. */
export function createMappingBacklog(db: Db) {
  const pending = db.prepare("SELECT count(*) FROM mapping_outbox WHERE state = 'pending'").pluck();
  const oldest = db.prepare("SELECT min(created_at) FROM mapping_outbox WHERE state = 'pending'").pluck();
  return {
    pending: () => pending.get() as number,
    /** Epoch ms; undefined when none waits. */
    oldestPendingCreatedAt: () => (oldest.get() as number | null) ?? undefined,
  };
}

/** Retention: deletes mappings the service took ('sent') whose last change is older than the cutoff; never pending, dead or dismissed ones. */
export function createSentMappingPruner(db: Db): (cutoffMs: number) => number {
  const prune = db.prepare("DELETE FROM mapping_outbox WHERE state = 'sent' AND updated_at < ?");
  return (cutoffMs) => prune.run(cutoffMs).changes;
}
