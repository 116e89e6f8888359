// Retention: finished events keep their row (and so their eventId, which the receiver's dedupe needs)
// for RETENTION_EVENT_ID_DAYS (7 at least), and their body for RETENTION_BODY_DAYS. Dead letters, dismissed
// ones and events not yet final are never pruned. The same RETENTION_EVENT_ID_DAYS prunes finished rows of the
// document outbox (final and written back to the EMR; the pusher's store does it) and of the mapping outbox
// (sent); rows still queued, HELD, unsynced, pending or dead stay. The audit trail has its own cutoff,
// RETENTION_AUDIT_DAYS (six years by default, never below the events'), pruned in the same pass. The EMR module's
// marks of messages it took (HL7 v2: MSH-3/4/10) go with the eventIds, at RETENTION_EVENT_ID_DAYS, and so do the
// quarantine's rows applied or dismissed (their bodies went when they were).
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { RetentionStore } from '../storage/retention.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Deletes finished documents whose last change is before the cutoff (epoch ms); says how many. */
export type PruneDocuments = (cutoffMs: number) => Promise<number>;

/** Deletes audit entries written before the cutoff (epoch ms); says how many. */
export type PruneAudit = (cutoffMs: number) => Promise<number>;

/** Deletes what the EMR module keeps only to recognise a repeated message, written before the cutoff. */
export type PruneEmr = (cutoffMs: number) => Promise<number>;

/** Deletes the quarantine's rows applied or dismissed before the cutoff (epoch ms); says how many. */
export type PruneQuarantine = (cutoffMs: number) => Promise<number>;

export interface Pruned {
  bodies: number;
  events: number;
  documents: number;
  mappings: number;
  audit: number;
  emr: number;
  quarantine: number;
}

export interface Retention {
  /** Deletes what is past its retention; says how many of each. */
  prune(): Promise<Pruned>;
}

export function createRetention(deps: {
  store: RetentionStore;
  pruneDocuments: PruneDocuments;
  pruneAudit?: PruneAudit;
  pruneEmr?: PruneEmr;
  pruneQuarantine?: PruneQuarantine;
  clock: Clock;
  settings: Config['retention'];
}): Retention {
  const { store, settings } = deps;
  return {
    async prune() {
      const now = deps.clock.now();
      const cutoff = now - Math.max(7, settings.eventIdDays) * DAY_MS;
      const { bodies, events } = await store.pruneEvents({ bodiesBefore: now - settings.bodyDays * DAY_MS, eventsBefore: cutoff });
      const documents = await deps.pruneDocuments(cutoff);
      const mappings = await store.pruneSentMappings(cutoff);
      // Never sooner than RETENTION_AUDIT_DAYS, nor than the events the entries name.
      const auditCutoff = now - Math.max(settings.auditDays, settings.eventIdDays) * DAY_MS;
      const audit = deps.pruneAudit ? await deps.pruneAudit(auditCutoff) : 0;
      // A message the EMR sends again after its eventIds are forgotten is long past any retry of the EMR's.
      const emr = deps.pruneEmr ? await deps.pruneEmr(cutoff) : 0;
      const quarantine = deps.pruneQuarantine ? await deps.pruneQuarantine(cutoff) : 0;
      return { bodies, events, documents, mappings, audit, emr, quarantine };
    },
  };
}
