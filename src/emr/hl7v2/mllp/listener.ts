// The adapter's MLLP listener, where the EMR sends its feeds: plain TCP or TLS (with client certificates
// required when a CA is given), each accepted connection served by serve-connection.ts.
import net from 'node:net';
import tls from 'node:tls';
import { type MessageHandler, type MllpLogger, peerOf, type ServedConnection, serveConnection } from './serve-connection.ts';

export type { MessageHandler, MessageMeta, MllpLogger } from './serve-connection.ts';

export interface MllpListenerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** With `ca`, a client must present a certificate signed by it. */
  tls?: { cert: Buffer; key: Buffer; ca?: Buffer };
  /** Largest message (between VT and FS) taken; a bigger frame closes its connection. */
  maxMessageBytes: number;
  logger: MllpLogger;
  /** Returns the ACK to send; throwing answers AR. Called one message at a time per connection. */
  onMessage: MessageHandler;
}

export interface MllpListener {
  readonly port: number;
  readonly host: string;
  /** Stops accepting, closes every connection, and resolves once they are closed and their handlers settled. */
  close(): Promise<void>;
}

export async function startMllpListener(opts: MllpListenerOptions): Promise<MllpListener> {
  if (!(opts.maxMessageBytes > 0)) throw new RangeError('maxMessageBytes must be positive');
  const { logger } = opts;
  const served = new Set<ServedConnection>();
  // Raw sockets too: a TLS connection still in its handshake has no ServedConnection yet.
  const sockets = new Set<net.Socket>();

  const serve = (socket: net.Socket) => {
    const connection = serveConnection(socket, { maxMessageBytes: opts.maxMessageBytes, logger, onMessage: opts.onMessage });
    served.add(connection);
    void connection.done.then(() => served.delete(connection));
  };

  const server = opts.tls
    ? tls.createServer(
        {
          cert: opts.tls.cert,
          key: opts.tls.key,
          ...(opts.tls.ca ? { ca: opts.tls.ca, requestCert: true, rejectUnauthorized: true } : {}),
        },
        serve,
      )
    : net.createServer(serve);
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  if (server instanceof tls.Server) {
    server.on('tlsClientError', (err, socket) => logger.warn({ peer: peerOf(socket), code: (err as { code?: unknown }).code }, 'MLLP TLS handshake failed'));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as net.AddressInfo;
  logger.info({ host: address.address, port: address.port, tls: opts.tls !== undefined }, 'MLLP listener started');

  let closing: Promise<void> | undefined;
  return {
    port: address.port,
    host: address.address,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const connection of served) connection.destroy();
        for (const socket of sockets) socket.destroy();
        await Promise.all([stopped, ...[...served].map((c) => c.done)]);
        logger.info({ port: address.port }, 'MLLP listener stopped');
      })();
      return closing;
    },
  };
}
