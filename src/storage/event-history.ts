// The history row each kind of event outcome writes, engine-neutral: both engines write these in the batch's
// own transaction (./processing.ts commit), so an event's history never disagrees with its state. A hand-back
// (release) changes nothing a person would read, so it writes none.
import type { EventHistoryState } from './event-views.ts';
import type { EventOutcome } from './processing.ts';

export interface OutcomeHistory {
  inboxId: number;
  state: EventHistoryState;
  reason: string | null;
  /** 1 when the outcome gave its attempt back (an EMR incident): the attempt it ended is the stored count + 1. */
  refund: 0 | 1;
}

export function outcomeHistory(o: EventOutcome): OutcomeHistory | undefined {
  switch (o.kind) {
    case 'applied':
      return { inboxId: o.inboxId, state: 'applied', reason: null, refund: 0 };
    case 'discarded_stale':
    case 'dead':
      return { inboxId: o.inboxId, state: o.kind, reason: o.reason, refund: 0 };
    case 'retry':
      return { inboxId: o.inboxId, state: 'retrying', reason: o.reason, refund: 0 };
    case 'wait':
      return { inboxId: o.inboxId, state: 'waiting', reason: o.reason, refund: 1 };
    case 'release':
      return undefined;
  }
}

/** The FHIR references of an applied outcome as stored (space-separated), or null. */
export const storedRefs = (o: EventOutcome): string | null => (o.kind === 'applied' && o.emrRefs?.length ? o.emrRefs.join(' ') : null);
