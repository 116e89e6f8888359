// Webhook delivery to subscribers, as docs/service-interface.md describes it (the gaps decided in
// docs/decisions.md#retry-ladder-timing, docs/decisions.md#ordering-and-exhaustion and
// docs/decisions.md#pause-and-resume): only subscribed types; one appointment's deliveries in order; each
// attempt as ./delivery-attempt.ts makes it. 50 consecutive failures pause a subscription, exactly: it never
// has more attempts in flight than failures left before the pause. A resume makes its whole queue due and
// drains it one delivery at a time, oldest first.
import type { Clock } from '../clock.ts';
import { PAUSE_AFTER_CONSECUTIVE_FAILURES } from '../contract/api.ts';
import type { Db } from '../sqlite/open.ts';
import type { Logger } from '../logger.ts';
import { attempt, type AttemptDeps, type AttemptStatements, type DeliveryRow, prepareAttemptStatements } from './delivery-attempt.ts';
import { orderKeyOf } from './events.ts';
import type { Faults } from './faults.ts';
import type { Store, Subscription } from './store.ts';

export interface Dispatcher {
  /** Queues an event for every subscription of its clinic that takes its type. */
  enqueue(event: { eventId: string; eventType: string; clinicId: string; appointment?: { serviceId: string } }): void;
  /**
   * Makes attempts due now, up to one batch, and waits for every one of them to be answered or abandoned;
   * returns how many it made. One call at a time (the simulator's turns).
   */
  runDue(): Promise<number>;
  /** Unpauses a subscription; a paused one's whole queue, events that failed before included, is due now, to drain in order. */
  resume(subscriptionId: string): void;
  /** The earliest time a queued delivery that can go (first of its appointment) falls due, if any. */
  nextDueAt(): number | undefined;
  queued(subscriptionId: string): number;
  /** Cuts off every request still on the network (the simulator stopping): its attempt fails, nothing waits for it. */
  stop(): void;
}

interface DispatcherDeps {
  db: Db;
  store: Store;
  clock: Clock;
  logger: Logger;
  faults: () => Faults;
  random?: () => number;
}

const BATCH = 256;

export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { store, clock } = deps;
  const random = deps.random ?? Math.random;
  const sql = prepareStatements(deps.db);
  const stopping = new AbortController();
  const lanes: Lanes = { deps: { ...deps, stopping: stopping.signal }, sql };
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
      const bySubscription = new Map<string, DeliveryRow[]>();
      for (const row of sql.due.all(clock.now()) as DeliveryRow[]) {
        const rows = bySubscription.get(row.subscription_id) ?? [];
        rows.push(row);
        bySubscription.set(row.subscription_id, rows);
      }
      // Settled, not all: a lane that failed must not end the pass while another's requests are on their way.
      const lanesDone = await Promise.allSettled([...bySubscription].map(([id, rows]) => runLane(lanes, id, rows)));
      const failed = lanesDone.find((l) => l.status === 'rejected');
      if (failed) throw failed.reason;
      return lanesDone.reduce((sum, l) => sum + (l.status === 'fulfilled' ? l.value : 0), 0);
    },
    resume(subscriptionId) {
      const sub = store.get('subscription', subscriptionId);
      if (!sub) return;
      // The queue drains in the order it was made: a retry that was waiting on the ladder goes with the rest.
      if (sub.paused) sql.dueNow.run(clock.now(), subscriptionId);
      store.put('subscription', { ...sub, paused: false, consecutiveFailures: 0, draining: sub.paused || sub.draining === true });
    },
    nextDueAt: () => (sql.nextDue.get() as number | null) ?? undefined,
    queued: (id) => sql.queued.get(id) as number,
    stop: () => stopping.abort(),
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
  const columns = 'd.id, d.subscription_id, d.event_id, d.event_type, d.order_key, d.body, d.attempts, d.next_attempt_at';
  return {
    ...prepareAttemptStatements(db),
    insert: db.prepare('INSERT INTO deliveries (subscription_id, event_id, event_type, order_key, body, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?)'),
    due: db.prepare(`SELECT ${columns} FROM deliveries d WHERE d.next_attempt_at <= ? AND ${canGo} ORDER BY d.next_attempt_at, d.id LIMIT ${BATCH}`),
    oldestDue: db.prepare(
      `SELECT ${columns} FROM deliveries d WHERE d.subscription_id = ? AND d.next_attempt_at <= ? AND ${canGo} ORDER BY d.next_attempt_at, d.id LIMIT ${BATCH}`,
    ),
    headOf: db.prepare(`SELECT ${columns} FROM deliveries d WHERE d.state = 'queued' AND d.subscription_id = ? AND d.order_key = ? ORDER BY d.id LIMIT 1`),
    dueNow: db.prepare("UPDATE deliveries SET next_attempt_at = ? WHERE subscription_id = ? AND state = 'queued'"),
    nextDue: db.prepare(`SELECT min(d.next_attempt_at) FROM deliveries d WHERE ${canGo}`).pluck(),
    queued: db.prepare("SELECT count(*) FROM deliveries WHERE state = 'queued' AND subscription_id = ?").pluck(),
  };
}

interface Lanes {
  deps: DispatcherDeps & AttemptDeps;
  sql: Statements & AttemptStatements;
}

/** One subscription's share of a pass: its due rows, or the next steps of its drain after a resume. */
function runLane(lanes: Lanes, subscriptionId: string, rows: DeliveryRow[]): Promise<number> {
  const sub = lanes.deps.store.get('subscription', subscriptionId);
  if (!sub || sub.paused) return Promise.resolve(0);
  return sub.draining ? drain(lanes, subscriptionId) : fanOut(lanes, subscriptionId, rows);
}

/**
 * Up to as many attempts at once as failures are left before the pause: were every one of them to fail, the
 * 50th would pause the subscription with nothing else in flight, so no attempt starts once it is reached.
 */
async function fanOut({ deps, sql }: Lanes, subscriptionId: string, rows: DeliveryRow[]): Promise<number> {
  const inFlight = createInFlight();
  let made = 0;
  for (const row of rows) {
    const sub = await room(deps.store, subscriptionId, inFlight);
    if (!sub) break;
    inFlight.add(attempt(deps, sql, row, sub));
    made++;
  }
  await inFlight.settled();
  return made;
}

/** The subscription once it may take one more attempt; undefined once it is paused. */
async function room(store: Store, subscriptionId: string, inFlight: InFlight): Promise<Subscription | undefined> {
  for (;;) {
    const sub = store.get('subscription', subscriptionId);
    if (!sub || sub.paused) return undefined;
    if (inFlight.size() < PAUSE_AFTER_CONSECUTIVE_FAILURES - sub.consecutiveFailures) return sub;
    if (inFlight.size() === 0) return undefined;
    await inFlight.oneSettled();
  }
}

/**
 * A resumed subscription's queue, one delivery at a time and oldest first, so that it arrives in the order it was
 * made. An event that fails again goes back on its ladder and the drain goes on; one that is done lets the next
 * of its appointment go, in its place in the order. Draining ends when nothing is due.
 */
async function drain({ deps, sql }: Lanes, subscriptionId: string): Promise<number> {
  let made = 0;
  let page: DeliveryRow[] = [];
  for (;;) {
    const sub = deps.store.get('subscription', subscriptionId);
    if (!sub || sub.paused) return made;
    if (page.length === 0) {
      page = sql.oldestDue.all(subscriptionId, deps.clock.now()) as DeliveryRow[];
      if (page.length === 0) {
        deps.store.put('subscription', { ...sub, draining: false });
        return made;
      }
      if (made >= BATCH) return made;
    }
    const row = page.shift()!;
    await attempt(deps, sql, row, sub);
    made++;
    const next = sql.headOf.get(subscriptionId, row.order_key) as DeliveryRow | undefined;
    if (next && next.id !== row.id && next.next_attempt_at <= deps.clock.now()) placeInPage(page, next);
  }
}

/**
 * Puts a delivery that can go now into the page where the queue's order has it. Past the page's last one it is
 * left out: the page may not hold everything due, and the next read of the queue finds it in its place.
 */
function placeInPage(page: DeliveryRow[], row: DeliveryRow): void {
  const at = page.findIndex((other) => goesBefore(row, other));
  if (at >= 0) page.splice(at, 0, row);
}

/** The queue's order: by due time, then by the order the deliveries were made. */
const goesBefore = (a: DeliveryRow, b: DeliveryRow) => a.next_attempt_at < b.next_attempt_at || (a.next_attempt_at === b.next_attempt_at && a.id < b.id);

type InFlight = ReturnType<typeof createInFlight>;

/**
 * The attempts a lane has made and not yet seen settle. A lane, and so its pass, ends only when every one has
 * (its request off the network: answered, or its connection gone, even past the timeout that failed it), an error
 * of one included: the clock must not move while a signed request can still reach its receiver.
 */
function createInFlight() {
  const pending = new Set<Promise<void>>();
  const errors: unknown[] = [];
  return {
    add(work: Promise<void>): void {
      const settled: Promise<void> = work.catch((err: unknown) => void errors.push(err)).finally(() => pending.delete(settled));
      pending.add(settled);
    },
    size: () => pending.size,
    oneSettled: () => Promise.race(pending),
    async settled(): Promise<void> {
      await Promise.all(pending);
      if (errors.length > 0) throw errors[0];
    },
  };
}
