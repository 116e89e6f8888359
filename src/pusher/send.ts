// Sending queued documents to the service: up to `concurrency` sends in flight, each claimed with a lease.
// An answer records the document's status (and first links a patient the service made for it to the EMR
// patient); a failure goes through the shared retry rule, Retry-After honoured: sent again later, or FAILED
// here (retries_exhausted, or the service's refusal code).
//
// Few commits: when places are free and no claimed row waits, one transaction (outbox.settle) records what
// became of the sends that ended since the last one and claims enough rows to fill the free places and as many
// again; the places that free up next start a claimed row at once, with no commit. Past the end of the queue,
// outcomes are recorded once half the places' worth have ended, or when the last send ends. So about one
// commit, one fsync, per `concurrency` documents, instead of one per outcome and one per claim. A crash before
// a commit leaves those rows leased and queued: taken over once their lease runs out (at the restart, where
// one process owns the database) and sent again, they get the service's first answer. Rows claimed and not
// sent when the pass ends (stopping) are given back at once.
//
// No document is sent twice while its sender lives, however many replicas claim: a claim takes only a free
// or run-out lease, and a claimed row starts its send only while at least half its lease is left (longer
// than a call to the service may take), else it is given back unsent; retries and give-backs name the lease
// they were claimed with, so they never touch a lease another replica has taken since.
import type { Clock } from '../clock.ts';
import type { Logger } from '../logger.ts';
import type { ServiceClient } from '../service-client/client.ts';
import { leaseLeftToStart } from '../work/lease.ts';
import { ServiceCallError } from '../service-client/errors.ts';
import type { RetryPolicy } from '../work/retry-decision.ts';
import type { ClaimedRow, DocumentStore, SendEnd } from '../storage/documents.ts';
import type { MappingStore } from '../storage/mappings.ts';
import { nextHeldPoll } from './held.ts';

export interface SenderDeps {
  clock: Clock;
  logger: Logger;
  outbox: Pick<DocumentStore, 'settle' | 'anyDue' | 'requestOf'>;
  mappings: Pick<MappingStore, 'link'>;
  serviceClient: Pick<ServiceClient, 'postDocument'>;
  retry: RetryPolicy;
  settings: { leaseMs: number; concurrency: number; heldPollMs: number };
  /** True once the pusher is stopping: no new send starts. */
  stopping: () => boolean;
}

export interface Sender {
  /** Keeps up to `concurrency` sends in flight, claiming more as each one finishes, until nothing is due. Returns how many it started. */
  sendDue(): Promise<number>;
}

/** A send that ended: what to record, and what to log once it is recorded. */
interface Ended {
  end: SendEnd;
  logged: () => void;
}

/** Resolves after the I/O callbacks that are ready now have run: answers that arrived together are settled together. */
const afterReadyIo = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createSender(deps: SenderDeps): Sender {
  const { clock, logger, settings } = deps;

  async function send(row: ClaimedRow): Promise<Ended> {
    const log = logger.child({ externalId: row.external_id, documentType: row.document_type, attempt: row.attempts });
    try {
      const request = await deps.outbox.requestOf(row.external_id);
      // No request kept: the row became final meanwhile (a document event); there is nothing to send.
      if (!request) return { end: { externalId: row.external_id, leaseUntil: row.lease_until!, unsent: true }, logged: () => undefined };
      const { resource, replayed } = await deps.serviceClient.postDocument(row.document_type, request);
      // Linked before anything else. The service's patient.created for a patient it made for this document
      // carries the EMR id we sent (patientExternalId), so the processor finds the EMR record in either
      // order; if it came first it has recorded this same link, which stands. A service patient mapped to
      // another EMR record is one the service matched by phone to someone else (a family member), or a
      // duplicate from a service that ignored patientExternalId: either way, a person should look.
      if (row.emr_patient_id && resource.patientServiceId && !(await deps.mappings.link('patient', resource.patientServiceId, row.emr_patient_id)))
        log.warn(
          { alert: true, patientServiceId: resource.patientServiceId, emrPatientId: row.emr_patient_id },
          'the service put this document with a patient the EMR holds as another record',
        );
      const nextPoll = resource.status === 'HELD' ? { nextPollAt: nextHeldPoll(clock.now(), settings.heldPollMs, resource.releaseAfter) } : {};
      return {
        end: { externalId: row.external_id, outcome: { state: resource.status, resource, ...nextPoll } },
        logged: () => log.info({ status: resource.status, replayed }, 'document sent to the service'),
      };
    } catch (err) {
      return afterFailure(row, err, log);
    }
  }

  function afterFailure(row: ClaimedRow, err: unknown, log: Logger): Ended {
    const retryAfterMs = err instanceof ServiceCallError ? (err.retryAfterMs ?? 0) : 0;
    const decision = deps.retry.decide(err, row.attempts, retryAfterMs);
    const { code, type, message } = decision.failure;
    if (decision.kind === 'give-up') {
      const finalCode = decision.exhausted ? 'retries_exhausted' : (code ?? 'rejected');
      return {
        end: { externalId: row.external_id, outcome: { state: 'FAILED', code: finalCode, reason: message } },
        logged: () => log.error({ alert: true, code: finalCode }, 'document could not be sent'),
      };
    }
    return {
      end: { externalId: row.external_id, leaseUntil: row.lease_until!, retry: { at: decision.at, code: code ?? type, reason: message } },
      logged: () => log.warn({ code }, 'document send failed; will retry'),
    };
  }

  /** Whether a claimed row still has enough of its lease left to start its send. */
  const leaseLeft = (row: ClaimedRow) => leaseLeftToStart(row.lease_until!, settings.leaseMs, clock.now());

  return {
    async sendDue() {
      const C = settings.concurrency;
      const inFlight = new Set<Promise<void>>();
      /**
       * Claimed by this pass and not yet recorded, with the lease last taken for each: a row claimed again (its
       * lease ran out while it was in flight) is not sent twice, and what ends names its newest lease.
       */
      const held = new Map<string, number>();
      let ready: ClaimedRow[] = [];
      /** Claimed, not sent: given back with the next commit. */
      let giveBack: ClaimedRow[] = [];
      let ended: Ended[] = [];
      let started = 0;
      let failure: { err: unknown } | undefined;

      const withNewestLease = (end: SendEnd): SendEnd => ('leaseUntil' in end ? { ...end, leaseUntil: held.get(end.externalId) ?? end.leaseUntil } : end);

      /** One transaction: what ended, the rows given back, and a claim of up to `limit` more. */
      async function record(limit: number): Promise<void> {
        // Taken now: sends that end while this commit is under way wait for the next one.
        const batch = ended;
        const returned = giveBack;
        ended = [];
        giveBack = [];
        let claimed: ClaimedRow[];
        try {
          claimed = await deps.outbox.settle(
            [
              ...batch.map((e) => withNewestLease(e.end)),
              ...returned.map((r) => ({ externalId: r.external_id, leaseUntil: held.get(r.external_id) ?? r.lease_until!, unsent: true as const })),
            ],
            limit,
            settings.leaseMs,
          );
        } catch (err) {
          // Nothing more starts; what ended is recorded again later, or the pass fails with this. The
          // leases stand: those rows are sent again once they run out, and replayed by the service.
          ended = [...batch, ...ended];
          giveBack = [...returned, ...giveBack];
          failure ??= { err };
          return;
        }
        for (const e of batch) {
          held.delete(e.end.externalId);
          e.logged();
        }
        for (const r of returned) held.delete(r.external_id);
        for (const row of claimed) {
          const inPass = held.has(row.external_id);
          held.set(row.external_id, row.lease_until!);
          if (!inPass) ready.push(row);
        }
      }

      function startReady(): void {
        while (ready.length && inFlight.size < C) {
          const row = ready.shift()!;
          // Waited too long for a place (a slow service): given back rather than sent on a lease that may run
          // out mid-send, when another replica could claim and send it too.
          if (!leaseLeft(row)) {
            giveBack.push(row);
            continue;
          }
          const p: Promise<void> = send(row)
            .then(
              (e) => void ended.push(e),
              (err: unknown) => {
                failure ??= { err };
              },
            )
            .finally(() => inFlight.delete(p));
          inFlight.add(p);
          started++;
        }
      }

      for (;;) {
        const open = !failure && !deps.stopping();
        if (open) startReady();
        if (open && inFlight.size < C && (giveBack.length > 0 || (await deps.outbox.anyDue()))) {
          // Places are free and nothing claimed waits: claim enough to fill them and as many again (their
          // leases run while they wait, for about one round of answers), and record what ended in the same
          // commit. Rows given back are due again at once: claimed again here, with a fresh lease.
          await record(2 * C - inFlight.size);
          startReady();
        } else if (ended.length && (inFlight.size === 0 || ended.length >= C / 2)) {
          await record(0);
        }
        if (inFlight.size === 0) {
          // Claimed and not sent (the pusher is stopping, or recording failed): given back at once.
          giveBack.push(...ready);
          ready = [];
          if (giveBack.length || ended.length) await record(0);
          if (failure) throw failure.err;
          return started;
        }
        await Promise.race(inFlight);
        await afterReadyIo();
      }
    },
  };
}
