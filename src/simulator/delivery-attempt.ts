// One webhook delivery attempt, as docs/service-interface.md describes it: the seven headers, signed with
// every active secret at the moment the request leaves; 2xx within 10 s is success; otherwise the next rung
// of the ladder, or given up after the eighth attempt with one alert. The attempt also keeps the
// subscription's count of consecutive failures, and pauses it at 50 (docs/decisions.md#pause-and-resume).
import { request } from 'undici';
import type { Clock } from '../clock.ts';
import { MAX_DELIVERY_ATTEMPTS, PAUSE_AFTER_CONSECUTIVE_FAILURES, RETRY_LADDER_SECONDS, WEBHOOK_TIMEOUT_MS } from '../contract/api.ts';
import type { Db } from '../sqlite/open.ts';
import type { Logger } from '../logger.ts';
import { signedWebhookHeaders } from '../signature/webhook-signature.ts';
import type { Store, Subscription } from './store.ts';

export interface DeliveryRow {
  id: number;
  subscription_id: string;
  event_id: string;
  event_type: string;
  order_key: string;
  body: string;
  attempts: number;
  next_attempt_at: number;
}

export interface AttemptDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
}

export type AttemptStatements = ReturnType<typeof prepareAttemptStatements>;

export function prepareAttemptStatements(db: Db) {
  return {
    settle: db.prepare('UPDATE deliveries SET state = ?, attempts = ? WHERE id = ?'),
    retry: db.prepare('UPDATE deliveries SET attempts = ?, next_attempt_at = ? WHERE id = ?'),
    log: db.prepare('INSERT INTO delivery_log (subscription_id, event_id, event_type, attempt, status_code, error, at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
    alert: db.prepare('INSERT INTO alerts (kind, subscription_id, event_id, message, at) VALUES (?, ?, ?, ?, ?)'),
  };
}

/** One attempt at one delivery: sent, logged, and then settled, retried later or given up. */
export async function attempt(deps: AttemptDeps, sql: AttemptStatements, row: DeliveryRow, sub: Subscription): Promise<void> {
  const n = row.attempts + 1;
  const { status, error } = await send(deps.clock, row, sub, n);
  const now = deps.clock.now();
  sql.log.run(sub.id, row.event_id, row.event_type, n, status ?? null, error ?? null, now);
  // Read again: other attempts to this subscription settled while this one was in flight.
  const fresh = deps.store.get('subscription', sub.id)!;
  if (status !== undefined && status >= 200 && status < 300) {
    sql.settle.run('delivered', n, row.id);
    deps.store.put('subscription', { ...fresh, consecutiveFailures: 0 });
    return;
  }
  const failures = fresh.consecutiveFailures + 1;
  const pause = !fresh.paused && failures >= PAUSE_AFTER_CONSECUTIVE_FAILURES;
  deps.store.put('subscription', { ...fresh, consecutiveFailures: failures, paused: fresh.paused || pause });
  if (pause) {
    sql.alert.run('subscription_paused', sub.id, null, `paused after ${failures} consecutive failed attempts`, now);
    deps.logger.warn({ subscriptionId: sub.id }, 'subscription paused');
  }
  if (n >= MAX_DELIVERY_ATTEMPTS) {
    sql.settle.run('given_up', n, row.id);
    sql.alert.run('delivery_given_up', sub.id, row.event_id, `given up after ${n} attempts`, now);
    deps.logger.warn({ subscriptionId: sub.id, eventId: row.event_id }, 'delivery given up');
  } else {
    sql.retry.run(n, now + RETRY_LADDER_SECONDS[n - 1]! * 1000, row.id);
  }
}

/**
 * POSTs the delivery signed afresh: the answer's status, and the error's code if one came (reading the body may
 * fail after the status). The timestamp is read in the same synchronous step that hands the request to undici:
 * nothing is awaited between reading the clock and sending.
 */
async function send(clock: Clock, row: DeliveryRow, sub: Subscription, n: number): Promise<{ status?: number; error?: string }> {
  const body = Buffer.from(row.body);
  let status: number | undefined;
  try {
    const res = await request(sub.url, {
      method: 'POST',
      headersTimeout: WEBHOOK_TIMEOUT_MS,
      bodyTimeout: WEBHOOK_TIMEOUT_MS,
      headers: signedWebhookHeaders({
        keyId: sub.keyId,
        secrets: sub.secrets,
        timestamp: Math.floor(clock.now() / 1000),
        body,
        eventId: row.event_id,
        eventType: row.event_type,
        attempt: n,
      }),
      body,
    });
    status = res.statusCode;
    await res.body.dump();
    return { status };
  } catch (err) {
    return { status, error: (err as { code?: string }).code ?? (err as Error).message };
  }
}
