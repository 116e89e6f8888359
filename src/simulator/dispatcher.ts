// Webhook delivery to subscribers, as docs/service-interface.md describes it (the gaps decided in
// docs/decisions.md#retry-ladder-timing, docs/decisions.md#ordering-and-exhaustion and
// docs/decisions.md#pause-and-resume): only subscribed types;
// the seven headers; signed afresh at each attempt with every active secret; 2xx within 10 s is
// success; otherwise retried 30 s, 2 min, 10 min, 1 h, 6 h, 12 h, 24 h after the previous attempt and
// given up after the eighth with one alert; one appointment's deliveries in order; 50 consecutive
// failures pause the subscription until it is resumed.
import { request } from 'undici';
import type { Clock } from '../clock.ts';
import { MAX_DELIVERY_ATTEMPTS, PAUSE_AFTER_CONSECUTIVE_FAILURES, RETRY_LADDER_SECONDS, WEBHOOK_TIMEOUT_MS } from '../contract/api.ts';
import type { Db } from '../database/open.ts';
import type { Logger } from '../logger.ts';
import { signedWebhookHeaders } from '../signature/webhook-signature.ts';
import type { Faults } from './faults.ts';
import { orderKeyOf } from './events.ts';
import type { Store, Subscription } from './store.ts';

interface DeliveryRow {
  id: number;
  subscription_id: string;
  event_id: string;
  event_type: string;
  body: string;
  attempts: number;
}

export interface Dispatcher {
  /** Queues an event for every subscription of its clinic that takes its type. */
  enqueue(event: { eventId: string; eventType: string; clinicId: string; appointment?: { serviceId: string } }): void;
  /** Makes every attempt due now; returns how many it made. */
  runDue(): Promise<number>;
  /** The earliest time a queued delivery that can go (first of its appointment) falls due, if any. */
  nextDueAt(): number | undefined;
  queued(subscriptionId: string): number;
}

interface DispatcherDeps {
  db: Db;
  store: Store;
  clock: Clock;
  logger: Logger;
  faults: () => Faults;
  random?: () => number;
}

export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { store, clock } = deps;
  const random = deps.random ?? Math.random;
  const sql = prepareStatements(deps.db);
  const inFlight = new Set<number>();
  return {
    enqueue(event) {
      const faults = deps.faults();
      const copies = faults.duplicateDeliveries ? 2 : 1;
      for (const sub of store.list('subscription', event.clinicId)) {
        if (!sub.eventTypes.includes(event.eventType)) continue;
        for (let i = 0; i < copies; i++) {
          const delay = faults.outOfOrder ? Math.floor(random() * 2_000) : 0;
          sql.insert.run(sub.id, event.eventId, event.eventType, orderKeyOf(event), JSON.stringify(event), clock.now() + delay);
        }
      }
    },
    async runDue() {
      const rows = (sql.due.all(clock.now()) as DeliveryRow[]).filter((r) => !inFlight.has(r.id));
      const work: Promise<void>[] = [];
      for (const row of rows) {
        const sub = store.get('subscription', row.subscription_id);
        if (!sub || sub.paused) continue;
        inFlight.add(row.id);
        work.push(attempt(deps, sql, row, sub).finally(() => inFlight.delete(row.id)));
      }
      await Promise.all(work);
      return work.length;
    },
    nextDueAt: () => (sql.nextDue.get() as number | null) ?? undefined,
    queued: (id) => sql.queued.get(id) as number,
  };
}

type Statements = ReturnType<typeof prepareStatements>;

function prepareStatements(db: Db) {
  // A paused subscription's queue waits for its resume: it is neither due nor next, so it cannot crowd out the
  // other subscriptions' deliveries, nor stop a jump of the clock from firing theirs each on time.
  const active = "subscription_id NOT IN (SELECT id FROM records WHERE kind = 'subscription' AND json_extract(data, '$.paused'))";
  // Only the first queued delivery of an appointment can go; the ones behind it wait for it, whatever their time.
  const canGo = `d.state = 'queued' AND d.${active}
      AND d.id = (SELECT min(x.id) FROM deliveries x WHERE x.state = 'queued' AND x.subscription_id = d.subscription_id AND x.order_key = d.order_key)`;
  return {
    insert: db.prepare('INSERT INTO deliveries (subscription_id, event_id, event_type, order_key, body, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?)'),
    due: db.prepare(`
    SELECT d.id, d.subscription_id, d.event_id, d.event_type, d.body, d.attempts FROM deliveries d
    WHERE d.next_attempt_at <= ? AND ${canGo}
    ORDER BY d.next_attempt_at, d.id LIMIT 256`),
    nextDue: db.prepare(`SELECT min(d.next_attempt_at) FROM deliveries d WHERE ${canGo}`).pluck(),
    queued: db.prepare("SELECT count(*) FROM deliveries WHERE state = 'queued' AND subscription_id = ?").pluck(),
    settle: db.prepare('UPDATE deliveries SET state = ?, attempts = ? WHERE id = ?'),
    retry: db.prepare('UPDATE deliveries SET attempts = ?, next_attempt_at = ? WHERE id = ?'),
    log: db.prepare('INSERT INTO delivery_log (subscription_id, event_id, event_type, attempt, status_code, error, at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
    alert: db.prepare('INSERT INTO alerts (kind, subscription_id, event_id, message, at) VALUES (?, ?, ?, ?, ?)'),
  };
}

/** One attempt at one delivery: sent, logged, and then settled, retried later or given up. */
async function attempt(deps: DispatcherDeps, sql: Statements, row: DeliveryRow, sub: Subscription): Promise<void> {
  const n = row.attempts + 1;
  const { status, error } = await send(deps.clock, row, sub, n);
  const now = deps.clock.now();
  sql.log.run(sub.id, row.event_id, row.event_type, n, status ?? null, error ?? null, now);
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

/** POSTs the delivery signed afresh: the answer's status, and the error's code if one came (reading the body may fail after the status). */
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
