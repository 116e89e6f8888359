// One connection accepted by the MLLP listener: frames in, messages handed to the handler one at a time
// in arrival order, each ACK written only once the handler has settled (so it can commit first).
import type { Socket } from 'node:net';
import { Hl7Message, Hl7Segment } from '@medplum/core';
import type { Hl7Connection, Hl7MessageEvent } from '@medplum/hl7';
import type { Logger } from '../../../logger.ts';
import { decodeFrame, encodingOf } from './charset.ts';
import { Hl7CharsetError } from './errors.ts';
import { openGatedConnection } from './frame-gate.ts';

/** What the listener logs with: identifiers only (peer, MSH-10, byte counts), never message content. */
export type MllpLogger = Pick<Logger, 'info' | 'warn' | 'error' | 'debug'>;

export interface MessageMeta {
  /** host:port of the sender. */
  peer: string;
  /** Size of the message (between VT and FS) in bytes. */
  bytes: number;
}

export type MessageHandler = (message: Hl7Message, meta: MessageMeta) => Promise<Hl7Message>;

export interface ServedConnection {
  /** Resolves when the socket has closed and the handler has settled for every message taken. */
  done: Promise<void>;
  destroy(): void;
}

export const peerOf = (socket: Socket): string =>
  socket.remoteFamily === 'IPv6' ? `[${socket.remoteAddress}]:${socket.remotePort}` : `${socket.remoteAddress}:${socket.remotePort}`;

const controlIdOf = (message: Hl7Message): string => message.getSegment('MSH')?.getField(10)?.toString() ?? '';

// HL7 table 0357 code 103 at MSH-18: the sender can see which field to fix.
const charsetErr = (message: Hl7Message, err: Hl7CharsetError): Hl7Segment =>
  new Hl7Segment(['ERR', '', 'MSH^1^18', '103^Table value not found^HL70357', 'E', '', '', '', err.message], message.context);

export function serveConnection(socket: Socket, deps: { maxMessageBytes: number; logger: MllpLogger; onMessage: MessageHandler }): ServedConnection {
  const { logger } = deps;
  const peer = peerOf(socket);
  let chain: Promise<void> = Promise.resolve();
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));

  // Frames are read as latin1 so that no byte is lost before MSH-18 says how to read them.
  const connection: Hl7Connection = openGatedConnection(socket, {
    encoding: 'latin1',
    maxMessageBytes: deps.maxMessageBytes,
    onOversize: (bytes) => logger.warn({ peer, bytes, maxMessageBytes: deps.maxMessageBytes }, 'MLLP frame over the size limit; connection closed'),
    onUnreadable: () => logger.warn({ peer }, 'MLLP frame is not an HL7 message; connection closed'),
  });
  // Keep-alive: a sender that vanished without closing would otherwise hold its connection for good.
  socket.setKeepAlive(true, 60_000);
  socket.setNoDelay(true);
  socket.on('error', (err) => logger.debug({ peer, code: (err as { code?: unknown }).code }, 'MLLP connection error'));
  logger.info({ peer }, 'MLLP connection opened');
  void closed.then(() => logger.info({ peer }, 'MLLP connection closed'));

  function sendAck(ack: Hl7Message, controlId: string): void {
    if (socket.destroyed || !socket.writable) {
      // The sender resends (same MSH-10) on a new connection; the handler must take that as a repeat.
      logger.warn({ peer, controlId }, 'MLLP connection closed before the acknowledgment could be sent');
      return;
    }
    let encoding: string;
    try {
      encoding = encodingOf(ack.toString());
    } catch {
      encoding = 'utf-8';
    }
    // The connection decodes as latin1; the ACK goes out in the charset it declares. send() is synchronous,
    // so no read can see the switched encoding.
    connection.setEncoding(encoding);
    try {
      connection.send(ack);
    } finally {
      connection.setEncoding('latin1');
    }
  }

  async function handle(raw: Hl7Message): Promise<void> {
    const bytes = Buffer.from(raw.toString(), 'latin1');
    const controlId = controlIdOf(raw);
    let message: Hl7Message;
    try {
      message = Hl7Message.parse(decodeFrame(bytes));
    } catch (err) {
      if (!(err instanceof Hl7CharsetError)) throw err;
      logger.warn({ peer, controlId, bytes: bytes.length, charset: err.declared }, 'MLLP message refused (AE): character set');
      sendAck(raw.buildAck({ ackCode: 'AE', errSegment: charsetErr(raw, err) }), controlId);
      return;
    }
    logger.debug({ peer, controlId, bytes: bytes.length }, 'MLLP message received');
    let ack: Hl7Message;
    try {
      ack = await deps.onMessage(message, { peer, bytes: bytes.length });
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      logger.error(
        { peer, controlId, err: { type: err instanceof Error ? err.name : typeof err, ...(typeof code === 'string' ? { code } : {}) } },
        'MLLP message handler failed; answered AR',
      );
      ack = message.buildAck({ ackCode: 'AR' });
    }
    sendAck(ack, controlId);
  }

  connection.addEventListener('message', (event: Hl7MessageEvent) => {
    const raw = event.message;
    chain = chain.then(() =>
      handle(raw).catch((err: unknown) => {
        logger.error({ peer, err: { type: err instanceof Error ? err.name : typeof err } }, 'MLLP message could not be handled; connection closed');
        socket.destroy();
      }),
    );
  });

  return {
    done: closed.then(() => chain),
    destroy: () => {
      socket.destroy();
    },
  };
}
