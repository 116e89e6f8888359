// Retention of the processor's rows, engine-neutral: finished events lose their body, then their row (and so
// their eventId, which the receiver's dedupe needs); dismissed dead letters lose their body (their row stays);
// mappings the service took are deleted; the inbox's counts per minute go with the events' ids. Dead letters and
// events not yet final are never touched. Which cutoffs apply is src/processor/retention.ts.

export interface RetentionStore {
  /**
   * Drops the bodies of events finished (applied or discarded) or dismissed before `bodiesBefore`, and deletes the rows of
   * those finished before `eventsBefore` (epoch ms), in one transaction. Returns how many of each.
   */
  pruneEvents(cutoffs: { bodiesBefore: number; eventsBefore: number }): Promise<{ bodies: number; events: number }>;
  /** Deletes mappings the service took ('sent') whose last change is before `before`; never pending, dead or dismissed ones. */
  pruneSentMappings(before: number): Promise<number>;
}
