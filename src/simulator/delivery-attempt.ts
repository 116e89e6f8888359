// One webhook delivery attempt, as docs/service-interface.md describes it: the seven headers, signed with
// every active secret at the moment the request leaves; 2xx within 10 s is success; otherwise the next rung
// of the ladder, or given up after the eighth attempt with one alert. The attempt also keeps the
// subscription's count of consecutive failures, and pauses it at 50 (docs/decisions.md#pause-and-resume).
// An attempt lasts until its request is off the network (see send), which can be after its 10 s have failed it.
import { request } from 'undici';
import { type Clock, toIso } from '../clock.ts';
import {
  DEFAULT_TOLERANCE_SECONDS,
  MAX_DELIVERY_ATTEMPTS,
  PAUSE_AFTER_CONSECUTIVE_FAILURES,
  RETRY_LADDER_SECONDS,
  WEBHOOK_TIMEOUT_MS,
} from '../contract/api.ts';
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
  /** Aborted when the simulator stops: what is still on the network is cut off, not waited for. */
  stopping: AbortSignal;
}

/**
 * How long a request stays on the network after its 10 s have failed it, waiting for the receiver to answer or
 * close: the receiver's tolerance, since a timestamp checked later than that is refused on real time alone.
 */
const LATE_ANSWER_WAIT_MS = DEFAULT_TOLERANCE_SECONDS * 1000;

/** The error an attempt records when no answer came within the 10 s (undici's code for it, as before). */
const TIMED_OUT = 'UND_ERR_HEADERS_TIMEOUT';

interface Outcome {
  status?: number;
  error?: string;
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
  const { status, error } = await send(deps, row, sub, n);
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
 * POSTs the delivery signed afresh. The timestamp is read in the same synchronous step that hands the request to
 * undici: nothing is awaited between reading the clock and sending.
 *
 * The outcome is the answer's status if it came within the 10 s, else the error's code (reading the body may fail
 * after the status). But the request stays the simulator's until it is off the network (answered, or its
 * connection gone), even once the 10 s have failed it: a receiver that takes requests one at a time reaches a
 * queued one late and checks its timestamp then, and a jump of the clock meanwhile (a pass, and so an advance,
 * waits for this promise) would make a request signed before the jump arrive after it, an hour stale.
 */
async function send(deps: AttemptDeps, row: DeliveryRow, sub: Subscription, n: number): Promise<Outcome> {
  const body = Buffer.from(row.body);
  const signedAt = deps.clock.now();
  const answered = request(sub.url, {
    method: 'POST',
    headersTimeout: LATE_ANSWER_WAIT_MS,
    bodyTimeout: LATE_ANSWER_WAIT_MS,
    signal: deps.stopping,
    headers: signedWebhookHeaders({
      keyId: sub.keyId,
      secrets: sub.secrets,
      timestamp: Math.floor(signedAt / 1000),
      body,
      eventId: row.event_id,
      eventType: row.event_type,
      attempt: n,
    }),
    body,
  });
  const ids = { subscriptionId: sub.id, eventId: row.event_id, eventType: row.event_type, attempt: n };
  // pino stamps the line with the real time the request was handed to the network; signedAt is the simulator's.
  deps.logger.info({ ...ids, signedAt: toIso(signedAt) }, 'webhook attempt sent');
  const started = performance.now();
  const offTheNetwork = answered.then(
    async (res): Promise<Outcome> => {
      try {
        await res.body.dump();
        return { status: res.statusCode };
      } catch (err) {
        return { status: res.statusCode, error: errorCode(err) };
      }
    },
    (err: unknown): Outcome => ({ error: errorCode(err) }),
  );
  const inTime = await settlesWithin(answered, WEBHOOK_TIMEOUT_MS);
  const outcome = await offTheNetwork;
  if (inTime) return outcome;
  deps.logger.warn({ ...ids, ...outcome, afterMs: Math.round(performance.now() - started) }, 'webhook answered after the timeout: the attempt failed');
  return { error: TIMED_OUT };
}

/** undici's code for what went wrong, else the message (an abort's DOMException has a numeric code). */
function errorCode(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : (err as Error).message;
}

/** Whether `work` settles, either way, within `ms` of real time. */
function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = work.then(
    () => true,
    () => true,
  );
  return Promise.race([settled, deadline]).finally(() => clearTimeout(timer));
}
