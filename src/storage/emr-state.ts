// A small durable store an EMR module keeps its own state in (src/emr/module.ts hands it one, scoped to the
// module): identifiers it must remember across restarts and replicas, such as which claims the EMR has
// acknowledged, or which inbound messages it has already taken. Engine-neutral; ./sqlite and ./postgres
// implement it over emr_state. Values are short strings: identifiers only, never patient data.

/** Keys and their values, written together. */
export type StateEntries = readonly (readonly [key: string, value: string])[];

/** How a write may be committed. */
export interface StateWriteOptions {
  /**
   * Nobody waits on it at once (a note that a message was acknowledged, read when the entity's next event
   * comes): it may wait a few milliseconds to share a commit with other writes. It still resolves only once
   * committed. Where the answer to the EMR waits on the write (a message's seen mark), leave it out.
   */
  lazy?: boolean;
}

export interface EmrStateStore {
  get(key: string): Promise<string | undefined>;
  /** Several keys at once; the ones found. */
  getMany(keys: readonly string[]): Promise<Map<string, string>>;
  /** Writes the value (replacing one there), committed when it resolves. */
  put(key: string, value: string, opts?: StateWriteOptions): Promise<void>;
  /** Writes several values in one transaction (one commit): what one message taught the module. */
  putMany(entries: StateEntries, opts?: StateWriteOptions): Promise<void>;
  /** Writes the value only if the key has none; resolves to whether this call wrote it. */
  putNew(key: string, value: string): Promise<boolean>;
  /** Deletes the keys starting with `prefix` last written before the cutoff (epoch ms); says how many. */
  pruneBefore(prefix: string, cutoffMs: number): Promise<number>;
}

/** One module's share of emr_state. */
export type EmrStateStores = (module: string) => EmrStateStore;
