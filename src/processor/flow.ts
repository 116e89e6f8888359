// The processor's flow of claimed events, with no barrier between batches: `concurrency` events in flight while
// work is due, the next one started the moment one ends. Work is claimed ahead (up to ROUNDS_AHEAD rounds of events
// held, claimed again when one round is left), outcomes are committed in groups as they finish (one commit, so one
// fsync, per claim of many rounds rather than per event), and each commit claims the next events in the same
// transaction. An event that shares a lock key with
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
  /** The most events in flight… */
  concurrency: number;
  /**
   * …and how many now, when less (intake first, src/work/intake-priority.ts: fewer while webhooks queue and the
   * event loop runs late). Claims follow it too, so that a commit's claim is no longer a turn than the events'.
   */
  limit?: () => number;
  leaseMs: number;
  clock: Clock;
}

/**
 * Rounds of `concurrency` events claimed ahead at most. A claim commits what finished since the last one, so this is
 * also about how many events share a commit (the batches of before measured 16 per slot as the point past which
 * larger gained nothing). An event claimed ahead waits under its lease; one whose lease is half gone is handed back.
 */
const ROUNDS_AHEAD = 16;

/**
 * The longest an outcome waits for its group's commit (real time). Against a slow EMR a group fills slowly: without
 * it, what was applied would show (and its mappings go out) in bursts seconds apart.
 */
const COMMIT_WITHIN_MS = 100;

interface Ready {
  c: ClaimedEvent;
  /** The lock keys its handling takes. */
  keys: string[];
  /** The earliest its lease ends (taken by the store at its own now + leaseMs, a moment after this reading). */
  leaseUntil: number;
}

/** Runs due events until none is due or `going()` turns false; returns how many reached a final state. */
export async function runFlow(deps: FlowDeps): Promise<number> {
  const most = deps.concurrency;
  const concurrency = deps.limit ? () => Math.max(1, Math.min(most, deps.limit!())) : () => most;
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
  /** Resolves when an event ends, or when the outcomes waiting have waited COMMIT_WITHIN_MS. */
  const ended = () => new Promise<void>((resolve) => (signal = resolve));
  /** The timer of the outcomes waiting for a commit, armed by the first of them. */
  let commitTimer: NodeJS.Timeout | undefined;
  let commitDue = false;
  const armCommitTimer = () => {
    if (commitTimer !== undefined || batch.outcomes().length === 0) return;
    commitTimer = setTimeout(() => {
      commitDue = true;
      signal?.();
    }, COMMIT_WITHIN_MS);
  };

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
    const { keys } = item;
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

  /**
   * Starts what can start, in claim order: while slots are free, each event whose keys are not busy; hands back what
   * must not start any more (all of it once stopping). What is past the last free slot is not looked at.
   */
  function startReady(): void {
    const stopping = error !== undefined || !deps.going();
    const waiting: Ready[] = [];
    let i = 0;
    for (; i < ready.length && (stopping || running < concurrency()); i++) {
      const item = ready[i]!;
      if (stopping || !leaseLeftToStart(item.leaseUntil, deps.leaseMs, deps.clock.now())) deps.release(item.c, sink);
      else if (holds(item.keys)) waiting.push(item);
      else start(item);
    }
    ready = i === ready.length ? waiting : waiting.concat(ready.slice(i));
  }

  /** Commits what finished, claiming more in the same transaction when `claim`. */
  async function commit(claim: boolean): Promise<void> {
    clearTimeout(commitTimer);
    commitTimer = undefined;
    commitDue = false;
    const done = batch;
    batch = createOutcomeBatch();
    const limit = Math.max(1, ROUNDS_AHEAD * concurrency() - ready.length);
    const leaseUntil = deps.clock.now() + deps.leaseMs;
    const claimed = await deps.queue.commit(done.outcomes(), claim ? { limit, leaseMs: deps.leaseMs } : undefined);
    done.committed();
    for (const c of claimed) ready.push({ c, keys: deps.keysOf(c), leaseUntil });
    if (claim) drained = claimed.length < limit;
  }

  /** Claim when no more than a round is left to start (and nothing stops it). */
  const canClaim = () => error === undefined && deps.going() && ready.length <= concurrency();
  /**
   * After a short claim, what is left is held back by events in flight (an entity's next event is due once its
   * current one is committed) or has not arrived: claim again once a round has finished, not per event.
   */
  const worthClaimingAgain = (outcomes: number) => outcomes >= concurrency() || (running === 0 && outcomes > 0);

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
    if (outcomes >= ROUNDS_AHEAD * most || (outcomes > 0 && (running === 0 || commitDue))) {
      await commit(canClaim());
      continue;
    }
    if (running === 0 && ready.length === 0) break;
    armCommitTimer();
    await ended();
  }
  clearTimeout(commitTimer);
  if (error !== undefined) throw error;
  return finished;
}
