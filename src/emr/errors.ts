// The errors every EmrPort raises, whatever the EMR behind it. The processor and the pusher decide what
// to do from these alone: retry an outage, park a refusal, wait out an incident without spending budgets.
import { AppError } from '../errors.ts';

export type EmrErrorCode =
  /** No answer, a timeout, 5xx, 429, 408: the EMR (or its sign-in) is down for now. Retried. */
  | 'emr_unavailable'
  /**
   * The EMR cannot be reached at all (its MLLP listener refuses or never answers a connection): an incident,
   * waited out without spending budgets or making dead letters, as docs/connecting-an-hl7-emr.md asks of an HL7 v2 EMR.
   */
  | 'emr_unreachable'
  /** The EMR refused this one call (another 4xx). Retrying it will not help. */
  | 'emr_rejected'
  /**
   * More than one EMR record carries one service id (two charts for one person): a person must decide which is
   * the one, so it is a dead letter naming them all, never a pick.
   */
  | 'emr_record_conflict'
  /** A record kept changing in the EMR while the adapter wrote it (412 round after round): a dead letter for a person. */
  | 'emr_edit_conflict'
  /** No free Slot of the doctor's schedule at the appointment's time: a person opens one in the EMR, then replays. */
  | 'slot_unavailable'
  /** The EMR refuses the adapter itself: sign-in refused, or 401/403 with a fresh token. An incident. */
  | 'emr_unauthorized'
  /** The EMR is not what the adapter needs (not FHIR R4). An incident; at start-up it stops the adapter. */
  | 'emr_incompatible'
  /** A document's content lives somewhere the adapter will not read from (another origin). Rejected. */
  | 'document_content_refused'
  /**
   * The EMR is in planned downtime (EMR_DOWNTIME, or set by an operator): the call was not made. Waited out like
   * an incident, though no incident is raised (src/runtime/emr-downtime.ts).
   */
  | 'emr_planned_downtime';

const RETRYABLE: ReadonlySet<EmrErrorCode> = new Set(['emr_unavailable', 'emr_unreachable', 'emr_unauthorized', 'emr_incompatible', 'emr_planned_downtime']);
const INCIDENT: ReadonlySet<EmrErrorCode> = new Set(['emr_unreachable', 'emr_unauthorized', 'emr_incompatible', 'emr_planned_downtime']);

export class EmrError extends AppError {
  declare readonly code: EmrErrorCode;

  constructor(
    code: EmrErrorCode,
    message: string,
    readonly httpStatus?: number,
    cause?: unknown,
    /** The wait the EMR asked for (Retry-After on a 429 or 503), in ms. */
    readonly retryAfterMs?: number,
  ) {
    super({ code, status: 502, message, retryable: RETRYABLE.has(code), incident: INCIDENT.has(code), cause });
  }

  /** The EMR pushed back (429, or 503 saying when to come back): it asks for time, not for fewer attempts. */
  get pushedBack(): boolean {
    return this.httpStatus === 429 || (this.httpStatus === 503 && this.retryAfterMs !== undefined);
  }
}
