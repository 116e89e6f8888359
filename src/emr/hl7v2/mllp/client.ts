// The adapter's MLLP sender: one connection to the EMR's listener, one message in flight, first in first
// out, a hard deadline per acknowledgment. It never resends: a failed send is the caller's to retry. The port
// sends through ./link-pool.ts, HL7_SEND_CONNECTIONS of these side by side.
import type { Socket } from 'node:net';
import { Hl7Message } from '@medplum/core';
import { ReturnAckCategory } from '@medplum/hl7';
import type { Clock } from '../../../clock.ts';
import { type BackoffPolicy, createBackoff, DEFAULT_BACKOFF } from './backoff.ts';
import type { MessageEncoding } from './charset.ts';
import { parseMllpUrl } from './endpoint.ts';
import { MllpError } from './errors.ts';
import { openGatedConnection } from './frame-gate.ts';
import { type ClientTls, isTlsError, openSocket } from './open-socket.ts';

export interface MllpClientOptions {
  /** mllp://host:port or mllps://host:port. */
  url: string;
  /** For mllps: our certificate (when the listener asks for one) and the CA to check the listener against. */
  tls?: ClientTls;
  /** How long to wait for each acknowledgment before dropping the connection. */
  ackTimeoutMs: number;
  /** Default 10 s. */
  connectTimeoutMs?: number;
  /** How messages are encoded and acknowledgments decoded. Default utf-8. */
  encoding?: MessageEncoding;
  /** Reads the backoff after a failed connect. */
  clock: Clock;
  /** Default 1 s doubling to 60 s. */
  backoff?: BackoffPolicy;
}

export interface MllpClient {
  /** Resolves with the peer's acknowledgment (any MSA-1: AA, AE, AR, CA, ...); rejects with MllpError. */
  send(message: Hl7Message): Promise<Hl7Message>;
  /** Whether its connection is open now (not before its first send, nor after a drop until a send connects again). */
  isConnected(): boolean;
  /** Milliseconds before it tries to connect again after a failed attempt (0: it would try now). */
  retryInMs(): number;
  close(): Promise<void>;
}

/** Acknowledgments are small; a peer streaming more than this without FS CR is broken or hostile. */
const MAX_ACK_BYTES = 1024 * 1024;
const KEEP_ALIVE_MS = 60_000;

interface Link {
  send(message: Hl7Message): Promise<Hl7Message>;
  isOpen(): boolean;
  /** Called once when the connection closes; with the TLS error when TLS ended it. */
  onClose(listener: (tlsError: boolean) => void): () => void;
  destroy(): Promise<void>;
}

export function createMllpClient(opts: MllpClientOptions): MllpClient {
  const endpoint = parseMllpUrl(opts.url);
  const { label } = endpoint;
  const connectTimeoutMs = opts.connectTimeoutMs ?? 10_000;
  const encoding = opts.encoding ?? 'utf-8';
  const backoff = createBackoff(opts.clock, opts.backoff ?? DEFAULT_BACKOFF);
  const aborter = new AbortController();
  let link: Link | undefined;
  let closed = false;
  let tail: Promise<unknown> = Promise.resolve();

  function wrap(socket: Socket): Link {
    const closeListeners = new Set<(tlsError: boolean) => void>();
    let tlsError = false;
    let open = true;
    const connection = openGatedConnection(socket, {
      encoding,
      maxMessageBytes: MAX_ACK_BYTES,
      // Both end the connection, and with it the send in flight ('closed').
      onOversize: () => undefined,
      onUnreadable: () => undefined,
    });
    socket.on('error', (err) => {
      if (isTlsError(err)) tlsError = true;
    });
    socket.on('close', () => {
      open = false;
      for (const listener of closeListeners) listener(tlsError);
      closeListeners.clear();
    });
    return {
      // FIRST: the contract takes CA (commit accept) as done; the default (APPLICATION) would ignore a CA
      // and wait out the deadline. Re-parsed so callers get @medplum/core's ESM Hl7Message, not the CJS one.
      send: async (message) => Hl7Message.parse((await connection.sendAndWait(message, { returnAck: ReturnAckCategory.FIRST })).toString()),
      isOpen: () => open && !socket.destroyed && socket.writable,
      onClose: (listener) => {
        closeListeners.add(listener);
        return () => closeListeners.delete(listener);
      },
      destroy: async () => {
        if (!open) return;
        const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
        socket.destroy();
        await gone;
      },
    };
  }

  async function connected(): Promise<Link> {
    if (link?.isOpen()) return link;
    link = undefined;
    const waitMs = backoff.remainingMs();
    if (waitMs > 0) throw new MllpError('unreachable', label, `not trying to connect for another ${waitMs} ms after a failed attempt`);
    let socket: Socket;
    try {
      socket = await openSocket(endpoint, opts.tls, connectTimeoutMs, aborter.signal);
    } catch (err) {
      if (!closed) backoff.failed();
      throw err;
    }
    if (closed) {
      socket.destroy();
      throw new MllpError('closed', label, 'client closed');
    }
    // One small frame per write and a reply awaited: Nagle would only add latency. Keep-alive finds a
    // peer that vanished while we were idle.
    socket.setNoDelay(true);
    socket.setKeepAlive(true, KEEP_ALIVE_MS);
    link = wrap(socket);
    return link;
  }

  function exchange(current: Link, message: Hl7Message): Promise<Hl7Message> {
    return new Promise((resolve, reject) => {
      if (!current.isOpen()) {
        reject(new MllpError('closed', label, 'connection closed before the message was sent'));
        return;
      }
      let settled = false;
      const settle = (outcome: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        stopListening();
        outcome();
      };
      // The connection goes with the deadline: an ACK arriving late on it must not be taken for the next
      // message, and a resend carries the same MSH-10.
      const timer = setTimeout(
        () =>
          settle(() => {
            void current.destroy();
            reject(new MllpError('timeout', label, `no acknowledgment within ${opts.ackTimeoutMs} ms; connection dropped`));
          }),
        opts.ackTimeoutMs,
      );
      const stopListening = current.onClose((tlsError) =>
        settle(() => {
          if (tlsError) backoff.failed();
          reject(
            tlsError
              ? new MllpError('tls', label, 'TLS refused by the peer before the acknowledgment')
              : new MllpError('closed', label, 'connection closed before the acknowledgment'),
          );
        }),
      );
      current.send(message).then(
        (ack) =>
          settle(() => {
            backoff.succeeded();
            resolve(ack);
          }),
        (err: unknown) =>
          settle(() => {
            void current.destroy();
            reject(new MllpError('closed', label, 'message could not be sent', err));
          }),
      );
    });
  }

  async function attempt(message: Hl7Message): Promise<Hl7Message> {
    if (closed) throw new MllpError('closed', label, 'client closed');
    if (!message.getSegment('MSH')?.getField(10)?.toString()) throw new TypeError('an HL7 message needs MSH-10 (message control id) to be sent');
    return exchange(await connected(), message);
  }

  return {
    send(message) {
      const result = tail.then(() => attempt(message));
      tail = result.catch(() => undefined);
      return result;
    },
    isConnected: () => !closed && link?.isOpen() === true,
    retryInMs: () => backoff.remainingMs(),
    async close() {
      closed = true;
      aborter.abort();
      await link?.destroy();
      link = undefined;
    },
  };
}
