// The history row each kind of event outcome writes, engine-neutral: both engines write these in the batch's
// own transaction (./processing.ts commit), so an event's history never disagrees with its state. A hand-back
// (release) changes nothing a person would read, so it writes none. An applied row carries the EMR references
// the event wrote or claimed.
import type { EventHistoryState } from './event-views.ts';
import type { EventOutcome } from './processing.ts';

export interface OutcomeHistory {
  inboxId: number;
  state: EventHistoryState;
  reason: string | null;
  /** 1 when the outcome gave its attempt back (an EMR incident): the attempt it ended is the stored count + 1. */
  refund: 0 | 1;
  /** Applied: the EMR references, space-separated; null otherwise. */
  refs: string | null;
}

const refsOf = (refs: string[] | undefined): string | null => (refs?.length ? refs.join(' ') : null);

export function outcomeHistory(o: EventOutcome): OutcomeHistory | undefined {
  switch (o.kind) {
    case 'applied':
      return { inboxId: o.inboxId, state: 'applied', reason: null, refund: 0, refs: refsOf(o.emrRefs) };
    case 'discarded_stale':
    case 'dead':
      return { inboxId: o.inboxId, state: o.kind, reason: o.reason, refund: 0, refs: null };
    case 'retry':
      return { inboxId: o.inboxId, state: 'retrying', reason: o.reason, refund: 0, refs: null };
    case 'wait':
      return { inboxId: o.inboxId, state: 'waiting', reason: o.reason, refund: 1, refs: null };
    case 'waiting':
      return { inboxId: o.inboxId, state: 'waiting_for_mapping', reason: o.reason, refund: 1, refs: null };
    case 'release':
      return undefined;
  }
}
