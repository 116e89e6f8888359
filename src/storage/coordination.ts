// What replicas sharing one database agree on, beyond the rows themselves: which one runs a singleton job
// (the EMR scan), which one works an entity that several events touch (a patient inside appointments), and a
// wake-up when another replica stored work. On SQLite (one process per file) each is an in-process trifle;
// on PostgreSQL they are advisory locks and LISTEN/NOTIFY.

/** Topics a replica can be woken for: new inbox rows (the processor), new or due documents (the pusher). */
export type WorkTopic = 'events' | 'documents';

export interface Coordination {
  /**
   * Runs `job` only if no other replica is running the job called `name` now; resolves `undefined` without
   * running it otherwise. The hold ends when `job` settles (or the replica dies).
   */
  exclusive<T>(name: string, job: () => Promise<T>): Promise<T | undefined>;
  /** Tells every replica (this one included) that work of `topic` was stored. */
  notify(topic: WorkTopic): void;
  /** Calls `listener` when any replica notified `topic`; returns the unsubscribe. */
  onWork(topic: WorkTopic, listener: () => void): () => void;
  close(): Promise<void>;
}
