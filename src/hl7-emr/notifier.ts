// Sends the EMR's queued messages to its notify target over MLLP client connections (@medplum/hl7's
// Hl7Client), one per lane (`connections`, default 1; ./lanes.ts puts each message on the lane of its key, so
// one patient's or one appointment's messages keep their order). Each lane sends one message at a time, oldest
// first, each waiting for its acknowledgment. Anything but AA (AE, AR, no answer in time, a closed or refused
// connection) leaves the message at the head of its lane and it is sent again, the same message, after a
// backoff that doubles up to a ceiling: never dropped, never overtaken within its lane, while the other lanes
// go on. A broken connection is dropped and made again on the next try. With one lane: one connection, one
// message at a time, in queue order.
import { setTimeout as delay } from 'node:timers/promises';
import { Hl7Message } from '@medplum/core';
import { Hl7Client, type Hl7Connection } from '@medplum/hl7';
import type { Logger } from '../logger.ts';
import { backoffCap } from '../work/backoff.ts';
import { componentOf } from './hl7-text.ts';
import { createLanes } from './lanes.ts';
import type { EmrState, QueuedMessage } from './state.ts';

export interface NotifierOptions {
  target: { host: string; port: number };
  state: EmrState;
  logger: Logger;
  /** How long to wait for an acknowledgment; default 10 s. */
  ackTimeoutMs?: number;
  /** Backoff after a failed try: baseMs, doubling, at most maxMs (defaults 500 ms and 30 s). */
  retry?: { baseMs?: number; maxMs?: number };
  /** How many connections (lanes) to send over, 1 to MAX_NOTIFY_CONNECTIONS; default 1. */
  connections?: number;
}

export const MAX_NOTIFY_CONNECTIONS = 16;

export interface Notifier {
  close(): Promise<void>;
}

class NotAcknowledged extends Error {}

/** One connection to the target, one message at a time. */
interface Link {
  /** Sends `m` and resolves when it is acknowledged AA; throws otherwise (and drops the connection if it broke). */
  deliver(m: QueuedMessage): Promise<void>;
  /** Closes the connection (it is made again at the next delivery). */
  drop(): Promise<void>;
}

function openLink(target: NotifierOptions['target'], ackTimeoutMs: number, stopping: AbortSignal): Link {
  const client = new Hl7Client({ host: target.host, port: target.port, connectTimeout: Math.min(ackTimeoutMs, 10_000) });

  // Hl7Client.close() must not run twice at once: the second strips the socket's listeners, and the first
  // then waits for a 'close' it will never hear. Every close goes through here, one at a time.
  let closing: Promise<void> | undefined;
  const dropConnection = (): Promise<void> =>
    (closing ??= client
      .close()
      .catch(() => undefined)
      .finally(() => {
        closing = undefined;
      }));

  async function deliver(m: QueuedMessage): Promise<void> {
    let ack: Hl7Message;
    try {
      const connection = await unlessStopped(client.connect(), stopping);
      if (connection.isClosed()) throw new Error('connection closed');
      ack = await acknowledgment(connection, Hl7Message.parse(m.text), ackTimeoutMs, stopping);
    } catch (err) {
      // Not connected, no answer, or the line broke: this connection is done with.
      await dropConnection();
      throw err;
    }
    const code = componentOf(ack.getSegment('MSA')?.getField(1), 1);
    if (code !== 'AA') throw new NotAcknowledged(`answered ${code || 'without MSA-1'}${errText(ack)}`);
  }

  return { deliver, drop: dropConnection };
}

export function startNotifier(opts: NotifierOptions): Notifier {
  const connections = opts.connections ?? 1;
  if (!Number.isInteger(connections) || connections < 1 || connections > MAX_NOTIFY_CONNECTIONS)
    throw new RangeError(`connections must be 1 to ${MAX_NOTIFY_CONNECTIONS}, got ${connections}`);
  const ackTimeoutMs = opts.ackTimeoutMs ?? 10_000;
  const baseMs = opts.retry?.baseMs ?? 500;
  const maxMs = opts.retry?.maxMs ?? 30_000;
  const stopping = new AbortController();
  const lanes = createLanes(connections);
  const links = Array.from({ length: connections }, () => openLink(opts.target, ackTimeoutMs, stopping.signal));
  const wakers: ((() => void) | undefined)[] = [];

  const idle = (lane: number) =>
    new Promise<void>((resolve) => {
      wakers[lane] = resolve;
    });
  const wake = (lane: number) => {
    wakers[lane]?.();
    wakers[lane] = undefined;
  };
  // What is queued now, oldest first, then each message as it is committed (waking its lane): each dispatched once.
  for (const m of opts.state.queued()) lanes.dispatch(m);
  const unsubscribe = opts.state.onQueued((m) => wake(lanes.dispatch(m)));

  /** One lane: its line's head, sent until acknowledged AA, then the next; a failure backs off this lane only. */
  async function run(lane: number): Promise<void> {
    const link = links[lane]!;
    const where = connections > 1 ? { lane } : {};
    let failures = 0;
    while (!stopping.signal.aborted) {
      const head = lanes.head(lane);
      if (!head) {
        await idle(lane);
        continue;
      }
      try {
        await link.deliver(head);
        opts.state.commit({ delivered: [head.id] });
        lanes.delivered(lane);
        opts.logger.info({ type: head.type, controlId: head.id, ...where }, 'notification acknowledged');
        failures = 0;
      } catch (err) {
        if (stopping.signal.aborted) break;
        failures++;
        const waitMs = backoffCap(failures, { baseMs, maxMs });
        opts.logger.warn(
          { type: head.type, controlId: head.id, ...where, attempt: failures, retryInMs: waitMs, err: (err as Error).message },
          'notification not acknowledged',
        );
        await delay(waitMs, undefined, { signal: stopping.signal }).catch(() => undefined);
      }
    }
  }

  const running = Promise.all(links.map((_link, lane) => run(lane)));
  return {
    async close() {
      stopping.abort();
      unsubscribe();
      for (let lane = 0; lane < connections; lane++) wake(lane);
      await running;
      await Promise.all(links.map((link) => link.drop()));
    },
  };
}

/** `p`, unless `signal` aborts first (then a rejection). */
function unlessStopped<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error('stopping'));
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The acknowledgment of `msg` on `connection`: rejects on timeout, on the connection closing, or on stop. */
function acknowledgment(connection: Hl7Connection, msg: Hl7Message, timeoutMs: number, signal: AbortSignal): Promise<Hl7Message> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`no acknowledgment within ${timeoutMs} ms`)), timeoutMs);
    const onClose = () => done(new Error('connection closed before the acknowledgment'));
    const onStop = () => done(new Error('stopping'));
    function done(err: Error | undefined, ack?: Hl7Message) {
      clearTimeout(timer);
      connection.removeEventListener('close', onClose);
      signal.removeEventListener('abort', onStop);
      if (err) reject(err);
      else resolve(ack!);
    }
    connection.addEventListener('close', onClose);
    signal.addEventListener('abort', onStop);
    connection.sendAndWait(msg).then(
      (ack) => done(undefined, ack),
      (err: unknown) => done(err instanceof Error ? err : new Error(String(err))),
    );
  });
}

const errText = (ack: Hl7Message): string => {
  const text = componentOf(ack.getSegment('ERR')?.getField(8), 1) || componentOf(ack.getSegment('MSA')?.getField(3), 1);
  return text ? `: ${text}` : '';
};
