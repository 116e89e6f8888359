// The mapping outbox's rows, engine-neutral: mappings queued for the service, handed out when due, marked
// sent, retried later or parked as dead. Posting them (and the retry rule) is src/mappings/outbox.ts.
import type { MappingEntityType } from '../contract/api.ts';

export interface QueuedMapping {
  entityType: MappingEntityType;
  serviceId: string;
  externalId: string;
  /** Attempts made before this one. */
  attempts: number;
  /** The trace context of the processing that claimed it (its post joins that trace); null: none. */
  traceContext?: string | null;
}

export interface MappingOutboxStore {
  /**
   * Up to `limit` mappings due now, oldest due first. On PostgreSQL a mapping handed out is not handed to
   * another replica for `leaseMs` (its due time moves on by that much; a failure sets it again); on SQLite
   * (one process) nothing is held.
   */
  claimDue(limit: number, leaseMs: number): Promise<QueuedMapping[]>;
  /** The service took these: each counts its attempt and becomes 'sent', in one transaction. */
  markSent(rows: QueuedMapping[]): Promise<void>;
  /** Tried again at `at` (epoch ms), the attempt counted and its reason kept. */
  retryAt(row: QueuedMapping, at: number, reason: string): Promise<void>;
  /** Refused for good: parked as a dead letter, the attempt counted and its reason kept. */
  markDead(row: QueuedMapping, reason: string): Promise<void>;
  /** How many wait. */
  pending(): Promise<number>;
}
