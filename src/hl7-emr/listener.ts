// The EMR's MLLP listener: a TCP server on the given address whose connections are @medplum/hl7
// Hl7Connections (they frame and parse; Hl7Server.start cannot bind an address or report a port 0 pick,
// so the socket server is node's). Each connection's messages are handled one at a time, in order, and each
// answer goes back on the connection it came in on; `undefined` answers nothing.
import { type AddressInfo, createServer, type Socket } from 'node:net';
import type { Hl7Message } from '@medplum/core';
import { Hl7Connection, type Hl7ErrorEvent, type Hl7MessageEvent } from '@medplum/hl7';
import type { Logger } from '../logger.ts';

export type MessageHandler = (msg: Hl7Message) => Promise<Hl7Message | undefined>;

export interface MllpListener {
  port: number;
  close(): Promise<void>;
}

export async function listenMllp(opts: { host: string; port: number; handle: MessageHandler; logger: Logger }): Promise<MllpListener> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    const connection = new Hl7Connection(socket);
    let turn: Promise<void> = Promise.resolve();
    connection.addEventListener('message', (event: Hl7MessageEvent) => {
      turn = turn.then(async () => {
        const reply = await opts.handle(event.message);
        if (reply && !connection.isClosed()) connection.send(reply);
      });
      turn = turn.catch((err: unknown) => opts.logger.error({ err: (err as Error).message }, 'HL7 message handling failed'));
    });
    connection.addEventListener('error', (event: Hl7ErrorEvent) => opts.logger.debug({ err: event.error.message }, 'MLLP connection error'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
