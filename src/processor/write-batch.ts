// The outcomes of a claimed batch of events, collected as data while the batch runs (an applied mark with its
// versions and mapping claims, a stale discard, a retry, a dead letter, a hand-back) and written by the store
// in one transaction at the batch's end (ProcessingQueue.commit), so a batch costs one commit instead of one
// per event; the same transaction claims the next batch. Until then an outcome is only in memory: a crash
// repeats the batch's events, whose EMR steps are idempotent, and an event's lease holds it meanwhile.
import type { EventOutcome } from '../storage/processing.ts';
import { bindToSpan } from '../tracing/spans.ts';

export interface OutcomeBatch {
  /** Adds one event's outcome; `committed` runs once the batch is committed (counters, logs). */
  add(outcome: EventOutcome, committed?: () => void): void;
  /** The outcomes added, in order. */
  outcomes(): EventOutcome[];
  /** Runs the `committed` hooks: the caller has committed the outcomes. */
  committed(): void;
}

export function createOutcomeBatch(): OutcomeBatch {
  const outcomes: EventOutcome[] = [];
  const hooks: (() => void)[] = [];
  return {
    add(outcome, committed) {
      outcomes.push(outcome);
      // Run later, in the span that added it: its log lines carry that span's ids.
      if (committed) hooks.push(bindToSpan(committed));
    },
    outcomes: () => outcomes,
    committed() {
      for (const hook of hooks.splice(0)) hook();
    },
  };
}
