// The durable mapping outbox: posts each new mapping back to the service until it succeeds. A failure that
// can pass is retried with backoff, without limit; a 409 mapping_conflict (or any other permanent refusal)
// parks the mapping as dead with one alert. Also its read-only backlog (metrics) and its retention.
import type { Clock } from '../clock.ts';
import type { MappingEntityType } from '../contract/api.ts';
import type { Db } from '../database/open.ts';
import type { Logger } from '../logger.ts';
import type { ServiceClient } from '../service-client/client.ts';
import type { BackoffSettings } from '../work/backoff.ts';
import { createRetryPolicy } from '../work/retry-decision.ts';

/** Mappings posted in one pass, at most. */
const POST_BATCH = 20;

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

export interface MappingOutboxDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  serviceClient: Pick<ServiceClient, 'putMapping'>;
  backoff: BackoffSettings;
  random: () => number;
  onAlert: () => void;
}

export function createMappingOutbox(deps: MappingOutboxDeps): MappingOutbox {
  const { db, clock, logger } = deps;
  const due = db.prepare(
    `SELECT entity_type, service_id, external_id, attempts FROM mapping_outbox WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ${POST_BATCH}`,
  );
  const done = db.prepare(
    'UPDATE mapping_outbox SET state = ?, attempts = attempts + 1, last_error = ?, updated_at = ? WHERE entity_type = ? AND service_id = ?',
  );
  const retry = db.prepare(
    'UPDATE mapping_outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ?, updated_at = ? WHERE entity_type = ? AND service_id = ?',
  );
  const pending = db.prepare("SELECT count(*) FROM mapping_outbox WHERE state = 'pending'").pluck();
  // The service may be down for long: a mapping is never given up for that, only when refused.
  const retryPolicy = createRetryPolicy({ clock, budget: { maxAttempts: Infinity, backoff: deps.backoff }, random: deps.random });

  const markSentTx = db.transaction((rows: OutboxRow[]) => {
    for (const r of rows) done.run('sent', null, clock.now(), r.entity_type, r.service_id);
  });
  const markSent = (rows: OutboxRow[]) => markSentTx.immediate(rows);

  /**
   * Posts one mapping and records the outcome; true when it reached a final state. A delivered mapping's mark is
   * queued in `sent`, written with the pass's others in one commit: posting one again after a crash is harmless
   * (the same mapping again answers 200), a commit per mapping was most of the processor's fsyncs.
   */
  async function post(r: OutboxRow, sent: OutboxRow[]): Promise<boolean> {
    const log = logger.child({ entityType: r.entity_type, serviceId: r.service_id, attempt: r.attempts + 1 });
    try {
      await deps.serviceClient.putMapping(r.entity_type, r.service_id, r.external_id);
      sent.push(r);
      log.debug('mapping posted');
      return true;
    } catch (err) {
      const decision = retryPolicy.decide(err, r.attempts + 1);
      const { reason, code } = decision.failure;
      if (decision.kind === 'retry-at') {
        retry.run(decision.at, reason, clock.now(), r.entity_type, r.service_id);
        log.warn({ code }, 'mapping post failed; will retry');
        return false;
      }
      done.run('dead', reason, clock.now(), r.entity_type, r.service_id);
      deps.onAlert();
      log.error({ alert: true, code }, 'mapping refused by the service; parked as a dead letter');
      return true;
    }
  }

  return {
    pending: () => pending.get() as number,
    async runOnce() {
      const rows = due.all(clock.now()) as OutboxRow[];
      const sent: OutboxRow[] = [];
      const finished = await Promise.all(rows.map((r) => post(r, sent)));
      if (sent.length) markSent(sent);
      return finished.filter(Boolean).length;
    },
  };
}

/** Read-only views of the mapping outbox, for metrics. */
export interface MappingBacklog {
  /** How many mappings wait. */
  pending(): number;
  /** Since when the oldest waits (epoch ms); undefined when none waits. */
  oldestPendingCreatedAt(): number | undefined;
}

export function createMappingBacklog(db: Db): MappingBacklog {
  const pending = db.prepare("SELECT count(*) FROM mapping_outbox WHERE state = 'pending'").pluck();
  const oldest = db.prepare("SELECT min(created_at) FROM mapping_outbox WHERE state = 'pending'").pluck();
  return {
    pending: () => pending.get() as number,
    oldestPendingCreatedAt: () => (oldest.get() as number | null) ?? undefined,
  };
}

/** Retention: deletes mappings the service took ('sent') whose last change is older than the cutoff; never pending, dead or dismissed ones. */
export function createSentMappingPruner(db: Db): (cutoffMs: number) => number {
  const prune = db.prepare("DELETE FROM mapping_outbox WHERE state = 'sent' AND updated_at < ?");
  return (cutoffMs) => prune.run(cutoffMs).changes;
}
