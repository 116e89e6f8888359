// Planned EMR downtime as operators set it (POST and DELETE /admin/emr/downtime), kept in the database so that
// every replica honours it and a restart keeps it: at most one operator downtime (until when, and why), and
// at most one scheduled window ended early (no EMR_DOWNTIME window that had begun by `setAt` counts until
// `until`). Engine-neutral; ./sqlite and ./postgres implement it over emr_downtime. The reason is an
// operator's note, never patient data.

export interface OperatorDowntime {
  /** Epoch ms: the EMR is down until then. */
  until: number;
  reason: string;
  /** Epoch ms: when it was set. */
  setAt: number;
}

export interface EndedWindow {
  /** Epoch ms: the end of the scheduled window ended early. */
  until: number;
  /** Epoch ms: when it was ended; a window that had begun by then does not count. */
  setAt: number;
}

export interface EmrDowntimeRows {
  operator?: OperatorDowntime;
  ended?: EndedWindow;
}

export interface EmrDowntimeStore {
  read(): Promise<EmrDowntimeRows>;
  /** Sets the operator downtime (replacing one there); forgets rows that ran out before `now`. */
  start(downtime: OperatorDowntime, now: number): Promise<void>;
  /** Ends the operator downtime and, when given, records the scheduled window ended early, in one transaction. */
  end(ended: EndedWindow | undefined, now: number): Promise<void>;
}
