// A parked item (a dead event, a dead mapping) a person set aside for good: who, why and when, stored in
// the dismissed_* columns of its table and shown as `dismissal`.

/** Where a parked item stands: a dead letter, or one a person dismissed. */
export type ParkedState = 'dead' | 'dismissed';

export interface Dismissal {
  reason: string;
  by: string;
  at: string;
}

export interface DismissalColumns {
  dismissed_reason: string | null;
  dismissed_by: string | null;
  dismissed_at: number | null;
}

/** `{ dismissal }` for a dismissed row, `{}` otherwise: spread into the row's public view. */
export const toDismissal = (r: DismissalColumns): { dismissal?: Dismissal } =>
  r.dismissed_at === null ? {} : { dismissal: { reason: r.dismissed_reason ?? '', by: r.dismissed_by ?? '', at: new Date(r.dismissed_at).toISOString() } };
