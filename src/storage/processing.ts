// The processor's queue, engine-neutral: inbox rows taken in (validated once), each entity's oldest open event
// handed out under a lease (so one entity's events apply in order and a failing one holds back only its own
// entity), and the outcomes of a claimed batch written as data in one transaction that also claims the next
// batch. The implementations are ./sqlite/processing.ts and ./postgres/processing.ts; the lease rule is the
// one of src/work/lease.ts.
import type { MappingEntityType } from '../contract/api.ts';
import type { Parsed, ParsedEvent } from '../contract/stored-event.ts';
import type { AppliedVersion } from './versions.ts';

/**
 * 'dismissed': a dead letter a person set aside for good (see src/processor/dead-letters.ts). 'waiting': the event
 * needs an EMR record nobody has mapped yet (docs/crosswalk.md); it heads its entity, is never due, and is due
 * again once each record it lacks is mapped.
 */
export type EventState = 'pending' | 'retrying' | 'waiting' | 'applied' | 'discarded_stale' | 'dead' | 'dismissed';

/** A record an event lacks: a service patient, doctor or location with no EMR record the adapter may use. */
export interface LackedRecord {
  entityType: 'patient' | 'doctor' | 'location';
  serviceId: string;
}

export interface ClaimedEvent {
  inboxId: number;
  eventId: string;
  entityKey: string;
  /** Attempts counted so far, this claim's included. */
  attempts: number;
  /** The receipt's trace context, stored with the inbox row: the processing's span is its child. Null: none (tracing was off). */
  traceContext: string | null;
}

/** An inbox row taken in as a valid event, with the event as validated (so it need not be parsed again). */
export interface TakenEvent extends ParsedEvent {
  inboxId: number;
}

export interface Intake {
  /** Inbox rows taken in. */
  taken: number;
  events: TakenEvent[];
  /** Rows that are not events, parked as dead letters at once. */
  dead: { eventId: string; reason: string }[];
}

/** A version an applied event stores with its applied mark (forward only: an older one changes nothing). */
export interface VersionWrite {
  entityKey: string;
  version: AppliedVersion;
  eventId: string;
  /** True when this is a snapshot noted earlier (EntityVersions.note), which its commit settles. */
  noted?: boolean;
}

/** A mapping the service has not got yet, queued in the mapping outbox with the applied mark. */
export interface MappingClaim {
  entityType: MappingEntityType;
  serviceId: string;
  emrId: string;
}

/** What one claimed event led to, as data: the store writes a batch of these in one transaction. */
export type EventOutcome =
  /**
   * `emrRefs`: the EMR records it wrote or claimed, as the EMR names them (`Patient/12`), stored for the console.
   * `traceContext`: the processing's span, stored with the mapping claims (their posts are its children).
   */
  | { kind: 'applied'; inboxId: number; versions: VersionWrite[]; claims: MappingClaim[]; emrRefs?: string[]; traceContext?: string | undefined }
  /** A final state that is not applied: a stale snapshot, or a dead letter; `reason` is stored. */
  | { kind: 'discarded_stale' | 'dead'; inboxId: number; reason: string }
  /** Tried again at `at`, the attempt counted. */
  | { kind: 'retry'; inboxId: number; at: number; reason: string }
  /** Tried again at `at`, the attempt given back: the failure was a dependency's incident, not this event's. */
  | { kind: 'wait'; inboxId: number; at: number; reason: string }
  /** Handed back untried: its lease freed, its attempt given back, due as it was. */
  | { kind: 'release'; inboxId: number }
  /**
   * Waits, its attempt given back and no timer set, until every record in `lacks` (in the order patient, doctor,
   * location) is mapped; a record mapped before this is written is not waited for (so no wake-up is lost).
   */
  | { kind: 'waiting'; inboxId: number; lacks: LackedRecord[]; reason: string };

/** The next claim, made in the same transaction as a batch's outcomes. */
export interface NextClaim {
  limit: number;
  leaseMs: number;
}

export interface ProcessingQueue {
  /**
   * Takes in inbox rows not taken in yet (up to `limit`); rows that are not events become dead letters at once.
   * Each row's history starts here: received (at its received time), and dead for those parked.
   * Safe to call from several replicas at once: each inbox row is taken in exactly once.
   */
  intake(limit?: number): Promise<Intake>;
  /**
   * Claims up to `limit` due events, each its entity's oldest open one, taking each one's lease for `leaseMs`
   * and counting an attempt. An event whose lease is live is never handed out; one whose lease ran out is.
   */
  claim(limit: number, leaseMs: number): Promise<ClaimedEvent[]>;
  /**
   * The stored event, its body opened (sealed at rest) and parsed: the parse of a claim of an event another
   * process took in. Not ok when the body was pruned, does not open (the reason names the key id) or is no event.
   */
  event(inboxId: number): Promise<Parsed>;
  /**
   * Writes `outcomes` (marks, versions, mapping claims, EMR references, one history row per change) in one
   * transaction and, when `next` is given, claims the next batch in that same transaction. Nothing is written
   * when it rejects.
   */
  commit(outcomes: EventOutcome[], next?: NextClaim): Promise<ClaimedEvent[]>;
  /**
   * Frees the leases that a process that stopped was holding, at this process's start; returns how many.
   * SQLite (one process per database) frees every lease: their holder is gone. PostgreSQL frees none: the
   * other replicas are alive, and a dead replica's leases run out after PROCESSOR_LEASE_MS and are claimed then.
   */
  releaseLeases(): Promise<number>;
}

/** Read-only views of the processor's backlog, for metrics. */
export interface ProcessorReadings {
  /** Events not yet final (inbox rows not taken in yet included); the mapping outbox not included. */
  depth(): Promise<number>;
  /** When the oldest of those was received (epoch ms); undefined when none waits. */
  oldestOpenReceivedAt(): Promise<number | undefined>;
  /** Mappings waiting to be posted to the service. */
  mappingsPending(): Promise<number>;
  /** When the oldest of those was queued (epoch ms); undefined when none waits. */
  oldestPendingMappingAt(): Promise<number | undefined>;
}
