// Sending queued documents to the service: up to `concurrency` sends in flight, each claimed with a lease.
// What one send ends with (the status answered, or a retry or FAILED through the shared retry rule) is
// ./send-one.ts; this is how the sends of a pass are claimed, started and recorded.
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
import type { ClaimedRow, DocumentStore, SendEnd } from '../storage/documents.ts';
import type { MappingStore } from '../storage/mappings.ts';
import { leaseLeftToStart } from '../work/lease.ts';
import type { RetryPolicy } from '../work/retry-decision.ts';
import { yieldToIo } from '../work/yield.ts';
import { createSendOne, type Ended } from './send-one.ts';

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

/** One sendDue() as it goes. */
interface SendPass {
  inFlight: Set<Promise<void>>;
  /**
   * Claimed by this pass and not yet recorded, with the lease last taken for each: a row claimed again (its
   * lease ran out while it was in flight) is not sent twice, and what ends names its newest lease.
   */
  held: Map<string, number>;
  /** Claimed, waiting for a place. */
  ready: ClaimedRow[];
  /** Claimed, not sent: given back with the next commit. */
  giveBack: ClaimedRow[];
  /** Ended, not yet recorded. */
  ended: Ended[];
  started: number;
  /** The first error that ends the pass (a failed commit, a bug in a send). */
  failure?: { err: unknown };
}

/** What one commit records: the sends that ended and the rows given back, taken out of the pass. */
interface Taken {
  ended: Ended[];
  returned: ClaimedRow[];
}

const newPass = (): SendPass => ({ inFlight: new Set(), held: new Map(), ready: [], giveBack: [], ended: [], started: 0 });

export function createSender(deps: SenderDeps): Sender {
  const { clock, settings } = deps;
  const C = settings.concurrency;
  const sendOne = createSendOne({ ...deps, heldPollMs: settings.heldPollMs });

  /** Whether the pass may start sends and claim more: nothing failed, and the pusher is not stopping. */
  const open = (p: SendPass) => !p.failure && !deps.stopping();

  /** Whether a claimed row still has enough of its lease left to start its send. */
  const leaseLeft = (row: ClaimedRow) => leaseLeftToStart(row.lease_until!, settings.leaseMs, clock.now());

  /** Takes out what the next commit records: sends that end while it is under way wait for the one after. */
  function take(p: SendPass): Taken {
    const taken = { ended: p.ended, returned: p.giveBack };
    p.ended = [];
    p.giveBack = [];
    return taken;
  }

  /** The commit's ends, each naming the newest lease this pass took for its row. */
  function endsOf(p: SendPass, t: Taken): SendEnd[] {
    const newest = (end: SendEnd): SendEnd => ('leaseUntil' in end ? { ...end, leaseUntil: p.held.get(end.externalId) ?? end.leaseUntil } : end);
    return [
      ...t.ended.map((e) => newest(e.end)),
      ...t.returned.map((r) => ({ externalId: r.external_id, leaseUntil: p.held.get(r.external_id) ?? r.lease_until!, unsent: true as const })),
    ];
  }

  /** The commit failed: nothing more starts; what it held is recorded again later, or the pass fails with this. */
  function putBack(p: SendPass, t: Taken, err: unknown): void {
    // The leases stand: those rows are sent again once they run out, and replayed by the service.
    p.ended = [...t.ended, ...p.ended];
    p.giveBack = [...t.returned, ...p.giveBack];
    p.failure ??= { err };
  }

  /** The commit is on disk: what it recorded is logged and let go; the rows it claimed wait for a place. */
  function afterCommit(p: SendPass, t: Taken, claimed: ClaimedRow[]): void {
    for (const e of t.ended) {
      p.held.delete(e.end.externalId);
      e.logged();
    }
    for (const r of t.returned) p.held.delete(r.external_id);
    for (const row of claimed) {
      const inPass = p.held.has(row.external_id);
      p.held.set(row.external_id, row.lease_until!);
      if (!inPass) p.ready.push(row);
    }
  }

  /** One transaction: what ended, the rows given back, and a claim of up to `limit` more. */
  async function record(p: SendPass, limit: number): Promise<void> {
    const t = take(p);
    let claimed: ClaimedRow[];
    try {
      claimed = await deps.outbox.settle(endsOf(p, t), limit, settings.leaseMs);
    } catch (err) {
      putBack(p, t, err);
      return;
    }
    afterCommit(p, t, claimed);
  }

  /** Starts one send; what it ends with waits in the pass for a commit. */
  function startSend(p: SendPass, row: ClaimedRow): void {
    const sending: Promise<void> = sendOne(row)
      .then(
        (e) => void p.ended.push(e),
        (err: unknown) => {
          p.failure ??= { err };
        },
      )
      .finally(() => p.inFlight.delete(sending));
    p.inFlight.add(sending);
    p.started++;
  }

  /** Fills the free places with claimed rows. */
  function startReady(p: SendPass): void {
    while (p.ready.length && p.inFlight.size < C) {
      const row = p.ready.shift()!;
      // Waited too long for a place (a slow service): given back rather than sent on a lease that may run
      // out mid-send, when another replica could claim and send it too.
      if (leaseLeft(row)) startSend(p, row);
      else p.giveBack.push(row);
    }
  }

  /**
   * Places are free and nothing claimed waits: claims enough to fill them and as many again (their leases run
   * while they wait, for about one round of answers), recording what ended in the same commit. Otherwise
   * records what ended once half the places' worth have, or the last send has.
   */
  async function claimOrRecord(p: SendPass): Promise<void> {
    const going = open(p);
    if (going) startReady(p);
    // Rows given back are due again at once: claimed again here, with a fresh lease.
    if (going && p.inFlight.size < C && (p.giveBack.length > 0 || (await deps.outbox.anyDue()))) {
      await record(p, 2 * C - p.inFlight.size);
      startReady(p);
    } else if (p.ended.length && (p.inFlight.size === 0 || p.ended.length >= C / 2)) {
      await record(p, 0);
    }
  }

  /** Nothing in flight: gives back at once what was claimed and not sent, records the rest, and ends the pass. */
  async function finish(p: SendPass): Promise<number> {
    p.giveBack.push(...p.ready);
    p.ready = [];
    if (p.giveBack.length || p.ended.length) await record(p, 0);
    if (p.failure) throw p.failure.err;
    return p.started;
  }

  /** Waits for a send to end, then for the I/O ready now: answers that arrived together are recorded together. */
  async function nextAnswers(p: SendPass): Promise<void> {
    await Promise.race(p.inFlight);
    await yieldToIo();
  }

  return {
    async sendDue() {
      const pass = newPass();
      for (;;) {
        await claimOrRecord(pass);
        if (pass.inFlight.size === 0) return finish(pass);
        await nextAnswers(pass);
      }
    },
  };
}
