// The adapter's storage, on the engine the settings name: SQLite at DATABASE_PATH (one process per file, the
// default) or PostgreSQL at DATABASE_URL (several replicas sharing one database). Everything outside
// src/storage takes the stores below and never learns which engine it runs on; this file is the one place
// that chooses.
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { Sealer } from '../sealing/sealer.ts';
import type { AuditStore } from './audit.ts';
import type { ConsoleSessionStore } from './console-sessions.ts';
import type { Coordination } from './coordination.ts';
import type { DocumentStore } from './documents.ts';
import type { EmrDowntimeStore } from './emr-downtime.ts';
import type { EmrStateStores } from './emr-state.ts';
import type { InboxStore } from './inbox.ts';
import { openPostgresStorage } from './postgres/open-storage.ts';
import type { ProcessorStores } from './processor-stores.ts';
import type { QuarantineStore } from './quarantine.ts';
import type { SignInFailureStore } from './sign-in-failures.ts';
import { holdSqliteFile, openSqliteStorage } from './sqlite/open-storage.ts';

export interface Storage {
  /** For logs and the status page: which engine, and where (a file, or host:port/database without a password). */
  engine: 'sqlite' | 'postgres';
  where: string;
  inbox: InboxStore;
  processor: ProcessorStores;
  documents: DocumentStore;
  coordination: Coordination;
  /** The audit trail of admin actions (src/audit/). */
  audit: AuditStore;
  /** The operator console's sessions (src/console/session.ts), shared by every replica. */
  consoleSessions: ConsoleSessionStore;
  /** Failed sign-ins per address (src/access/throttle.ts), shared by every replica. */
  signInFailures: SignInFailureStore;
  /** What EMR modules keep of their own (src/emr/module.ts), one share per module, shared by every replica. */
  emrState: EmrStateStores;
  /** Planned EMR downtime set by operators (./emr-downtime.ts), honoured by every replica. */
  emrDowntime: EmrDowntimeStore;
  /** Signed webhooks over WEBHOOK_MAX_BODY_BYTES, kept until an operator applies or dismisses them (./quarantine.ts). */
  quarantine: QuarantineStore;
  /** Closes the stores' connections (after the workers and the inbox have stopped). */
  close(): Promise<void>;
}

/** Where the state is kept: Config's two storage settings (src/config.ts), named here so the stores stay below it. */
export interface StorageSettings {
  /** The SQLite file (unused once databaseUrl is set). */
  databasePath: string;
  /** postgres://…: the state in PostgreSQL, shared by several replicas; unset: SQLite at databasePath. */
  databaseUrl?: string;
}

/** What keeps other processes off the store until released: SQLite's one-process lock; nothing on PostgreSQL. */
export interface StoreHold {
  release(): void;
}

/**
 * Taken before anything else starts, so that a second `serve` on the same SQLite file stops at once. On
 * PostgreSQL any number of replicas may run, so there is nothing to hold.
 */
export function holdStore(settings: StorageSettings, clock: Clock): StoreHold {
  return settings.databaseUrl ? { release: () => undefined } : holdSqliteFile(settings.databasePath, clock);
}

/** Opens the configured store, its schema checked (SchemaOutdatedError names the command to run). */
/** What the stores are opened with: `sealer` seals and opens patient data at rest (./sealed-contexts.ts); none: clear only. */
export interface StorageDeps {
  clock: Clock;
  logger: Logger;
  sealer?: Sealer;
}

export function openStorage(settings: StorageSettings, deps: StorageDeps): Promise<Storage> {
  return settings.databaseUrl ? openPostgresStorage(settings.databaseUrl, deps) : Promise.resolve(openSqliteStorage(settings.databasePath, deps));
}
