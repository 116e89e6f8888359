// The processor's flow of claimed events, with no barrier between batches: `concurrency` events in flight while
// work is due, the next one started the moment one ends. Work is claimed ahead (about two rounds of events held),
// outcomes are committed in groups as they finish (one commit, so one fsync, per round of events rather than per
// event), and each commit claims the next events in the same transaction. An event that shares a lock key with
// one in flight (two appointments of one patient) waits here, not in a slot: the slots go to events that can call
// the EMR. When claims come back short the flow takes in what arrived since (intake) before claiming again, so a
// backlog arriving while it runs is followed without waiting for the next pass.
import type { Clock } from '../clock.ts';
import type { ClaimedEvent, ProcessingQueue } from '../storage/processing.ts';
import { leaseLeftToStart } from '../work/lease.ts';
import { createOutcomeBatch, type OutcomeBatch } from './write-batch.ts';

export interface FlowDeps {
  queue: Pick<ProcessingQueue, 'claim' | 'commit'>;
  /** Handles one event, its outcome added to `batch`; true when that outcome is a final state. */
  handle(c: ClaimedEvent, batch: OutcomeBatch): Promise<boolean>;
  /** Hands an event back untried (stopping, an EMR incident, its lease too short to start). */
  release(c: ClaimedEvent, batch: OutcomeBatch): void;
  /** The lock keys the event's handling takes (its entity, the patient an appointment names). */
  keysOf(c: ClaimedEvent): string[];
  /** Takes in inbox rows that arrived since; true when it took any. */
  intake(): Promise<boolean>;
  /** Whether to start another event: false once stopping, or while an EMR incident holds the gate closed. */
  going(): boolean;
  concurrency: number;
  leaseMs: number;
  clock: Clock;
}

interface Ready {
  c: ClaimedEvent;
  /** The earliest its lease ends (taken by the store at its own now + leaseMs, a moment after this reading). */
  leaseUntil: number;
}

/** Runs due events until none is due or `going()` turns false; returns how many reached a final state. */
export async function runFlow(deps: FlowDeps): Promise<number> {
  const { concurrency } = deps;
  /** Claimed, not started; those whose keys are busy stay here until the event holding them ends. */
  let ready: Ready[] = [];
  const busy = new Map<string, number>();
  let running = 0;
  let finished = 0;
  let error: unknown;
  let batch = createOutcomeBatch();
  /** The last claim came back short: claim again only once enough has finished, or new rows arrived. */
  let drained = false;
  let signal: (() => void) | undefined;
  const ended = () => new Promise<void>((resolve) => (signal = resolve));

  const holds = (keys: string[]) => keys.some((k) => busy.has(k));
  const mark = (keys: string[], by: number) => {
    for (const k of keys) {
      const n = (busy.get(k) ?? 0) + by;
      if (n === 0) busy.delete(k);
      else busy.set(k, n);
    }
  };

  /** Where events add their outcomes: the batch open when the outcome comes (a commit swaps it for a new one). */
  const sink: OutcomeBatch = {
    add: (outcome, committed) => batch.add(outcome, committed),
    outcomes: () => batch.outcomes(),
    committed: () => batch.committed(),
  };

  function start(item: Ready): void {
    const keys = deps.keysOf(item.c);
    mark(keys, 1);
    running++;
    deps
      .handle(item.c, sink)
      .then(
        (final) => (finished += final ? 1 : 0),
        // A bug, not a failed attempt: the event keeps its lease until it runs out; the others are written.
        (err: unknown) => (error ??= err),
      )
      .finally(() => {
        mark(keys, -1);
        running--;
        signal?.();
      });
  }

  /** Starts what can start: free slots, keys not busy; hands back what must not start any more. */
  function startReady(): void {
    const waiting: Ready[] = [];
    for (const item of ready) {
      if (error !== undefined || !deps.going() || !leaseLeftToStart(item.leaseUntil, deps.leaseMs, deps.clock.now())) deps.release(item.c, sink);
      else if (running >= concurrency || holds(deps.keysOf(item.c))) waiting.push(item);
      else start(item);
    }
    ready = waiting;
  }

  /** Commits what finished, claiming more in the same transaction when `claim`. */
  async function commit(claim: boolean): Promise<void> {
    const done = batch;
    batch = createOutcomeBatch();
    const limit = 2 * concurrency - ready.length;
    const leaseUntil = deps.clock.now() + deps.leaseMs;
    const claimed = await deps.queue.commit(done.outcomes(), claim ? { limit, leaseMs: deps.leaseMs } : undefined);
    done.committed();
    for (const c of claimed) ready.push({ c, leaseUntil });
    if (claim) drained = claimed.length < limit;
  }

  const canClaim = () => error === undefined && deps.going() && ready.length <= concurrency;
  /**
   * After a short claim, what is left is held back by events in flight (an entity's next event is due once its
   * current one is committed) or has not arrived: claim again once a quarter round has finished, not per event.
   */
  const worthClaimingAgain = (outcomes: number) => outcomes >= Math.max(1, concurrency >> 2) || (running === 0 && outcomes > 0);

  for (;;) {
    startReady();
    const outcomes = batch.outcomes().length;
    if (canClaim() && (!drained || worthClaimingAgain(outcomes))) {
      if (drained) await deps.intake();
      await commit(true);
      continue;
    }
    if (canClaim() && running === 0 && (await deps.intake())) {
      await commit(true);
      continue;
    }
    if (outcomes >= concurrency || (outcomes > 0 && running === 0)) {
      await commit(false);
      continue;
    }
    if (running === 0 && ready.length === 0) break;
    await ended();
  }
  if (error !== undefined) throw error;
  return finished;
}
