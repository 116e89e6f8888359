// Sends the EMR's queued messages to its notify target over one MLLP client connection (@medplum/hl7's
// Hl7Client): one at a time, oldest first, each waiting for its acknowledgment. Anything but AA (AE, AR, no
// answer in time, a closed or refused connection) leaves the message at the head of the queue and it is sent
// again, the same message, after a backoff that doubles up to a ceiling: never dropped, never overtaken. A
// broken connection is dropped and made again on the next try.
import { setTimeout as delay } from 'node:timers/promises';
import { Hl7Message } from '@medplum/core';
import { Hl7Client, type Hl7Connection } from '@medplum/hl7';
import type { Logger } from '../logger.ts';
import { componentOf } from './hl7-text.ts';
import type { EmrState, QueuedMessage } from './state.ts';

export interface NotifierOptions {
  target: { host: string; port: number };
  state: EmrState;
  logger: Logger;
  /** How long to wait for an acknowledgment; default 10 s. */
  ackTimeoutMs?: number;
  /** Backoff after a failed try: baseMs, doubling, at most maxMs (defaults 500 ms and 30 s). */
  retry?: { baseMs?: number; maxMs?: number };
}

export interface Notifier {
  /** Something was queued: send it when its turn comes. */
  kick(): void;
  close(): Promise<void>;
}

class NotAcknowledged extends Error {}

export function startNotifier(opts: NotifierOptions): Notifier {
  const ackTimeoutMs = opts.ackTimeoutMs ?? 10_000;
  const baseMs = opts.retry?.baseMs ?? 500;
  const maxMs = opts.retry?.maxMs ?? 30_000;
  const client = new Hl7Client({ host: opts.target.host, port: opts.target.port, connectTimeout: Math.min(ackTimeoutMs, 10_000) });
  const stopping = new AbortController();
  let wake: (() => void) | undefined;

  const idle = () =>
    new Promise<void>((resolve) => {
      wake = resolve;
    });

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

  /** Sends `m` and resolves when it is acknowledged AA; throws otherwise. */
  async function deliver(m: QueuedMessage): Promise<void> {
    let ack: Hl7Message;
    try {
      const connection = await unlessStopped(client.connect(), stopping.signal);
      if (connection.isClosed()) throw new Error('connection closed');
      ack = await acknowledgment(connection, Hl7Message.parse(m.text), ackTimeoutMs, stopping.signal);
    } catch (err) {
      // Not connected, no answer, or the line broke: this connection is done with.
      await dropConnection();
      throw err;
    }
    const code = componentOf(ack.getSegment('MSA')?.getField(1), 1);
    if (code !== 'AA') throw new NotAcknowledged(`answered ${code || 'without MSA-1'}${errText(ack)}`);
  }

  async function run(): Promise<void> {
    let failures = 0;
    while (!stopping.signal.aborted) {
      const head = opts.state.head();
      if (!head) {
        await idle();
        continue;
      }
      try {
        await deliver(head);
        opts.state.commit({ delivered: [head.id] });
        opts.logger.info({ type: head.type, controlId: head.id }, 'notification acknowledged');
        failures = 0;
      } catch (err) {
        if (stopping.signal.aborted) break;
        failures++;
        const waitMs = Math.min(maxMs, baseMs * 2 ** Math.min(failures - 1, 30));
        opts.logger.warn(
          { type: head.type, controlId: head.id, attempt: failures, retryInMs: waitMs, err: (err as Error).message },
          'notification not acknowledged',
        );
        await delay(waitMs, undefined, { signal: stopping.signal }).catch(() => undefined);
      }
    }
  }

  const running = run();
  return {
    kick() {
      wake?.();
      wake = undefined;
    },
    async close() {
      stopping.abort();
      wake?.();
      await running;
      await dropConnection();
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
