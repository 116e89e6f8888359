// Loopback peers for the MLLP tests, written against raw sockets so that they do not share the framing
// code under test: a sending peer for the listener, a receiving peer (a stand-in EMR) for the client,
// and HL7 texts and frames to pass between them.
import net from 'node:net';

export const VT = 0x0b;
export const FS = 0x1c;
export const CR = 0x0d;

/** An ADT^A31 with control id `controlId`; MSH-18 only when `charset` is given. */
export function adt(controlId: string, opts: { name?: string; charset?: string } = {}): string {
  const msh = `MSH|^~\\&|EMR|HOSPITAL|EMR-BRIDGE|SERVICE|20260115100000||ADT^A31^ADT_A05|${controlId}|P|2.5.1${opts.charset === undefined ? '' : `||||||${opts.charset}`}`;
  return [msh, `PID|1||P-${controlId}^^^SERVICE^PI||${opts.name ?? 'Doe^Jane'}`, 'PV1|1|N'].join('\r');
}

/** An acknowledgment whose MSA-2 is `ackedId`; MSA-3 carries `text` so a test can tell ACKs apart. */
export function ack(ackedId: string, code = 'AA', text = ''): string {
  return [`MSH|^~\\&|EMR|HOSPITAL|EMR-BRIDGE|SERVICE|20260115100001||ACK^A31^ACK|ACK-${ackedId}-${text}|P|2.5.1`, `MSA|${code}|${ackedId}|${text}`].join('\r');
}

export function frame(text: string | Buffer, encoding: BufferEncoding = 'utf8'): Buffer {
  const body = typeof text === 'string' ? Buffer.from(text, encoding) : text;
  return Buffer.concat([Buffer.from([VT]), body, Buffer.from([FS, CR])]);
}

/** Splits a byte stream into frame bodies: a test-side reader independent of @medplum/hl7. */
export function createFrameReader(onFrame: (body: Buffer) => void): (chunk: Buffer) => void {
  let buffered = Buffer.alloc(0);
  return (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      const start = buffered.indexOf(VT);
      if (start === -1) return;
      const end = buffered.indexOf(Buffer.from([FS, CR]), start);
      if (end === -1) return;
      onFrame(buffered.subarray(start + 1, end));
      buffered = buffered.subarray(end + 2);
    }
  };
}

export const controlIdOf = (text: string): string => text.split('\r')[0]!.split('|')[9]!;
export const msaOf = (text: string): string[] =>
  text
    .split('\r')
    .find((s) => s.startsWith('MSA|'))!
    .split('|')
    .slice(1);

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A port nothing listens on (it was free a moment ago). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A sending peer: writes bytes to a listener and reads back its acknowledgments. */
export interface SendingPeer {
  socket: net.Socket;
  acks: string[];
  closed: Promise<void>;
  write(bytes: Buffer): Promise<void>;
  waitForAcks(n: number, timeoutMs?: number): Promise<string[]>;
  end(): Promise<void>;
}

export async function connectPeer(port: number): Promise<SendingPeer> {
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => undefined);
  const acks: string[] = [];
  socket.on(
    'data',
    createFrameReader((body) => acks.push(body.toString('utf8'))),
  );
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return {
    socket,
    acks,
    closed,
    write: (bytes) => new Promise<void>((resolve, reject) => socket.write(bytes, (err) => (err ? reject(err) : resolve()))),
    async waitForAcks(n, timeoutMs = 5_000) {
      const deadline = performance.now() + timeoutMs;
      while (acks.length < n) {
        if (performance.now() > deadline) throw new Error(`${acks.length} of ${n} acknowledgments within ${timeoutMs} ms`);
        await sleep(5);
      }
      return acks.slice(0, n);
    },
    async end() {
      socket.destroy();
      await closed;
    },
  };
}

/** A receiving peer: a stand-in EMR listener that hands each frame to `onFrame` with the socket it came on. */
export interface ReceivingPeer {
  port: number;
  /** Every frame received, in order, with the connection number (1, 2, ...) and when it arrived. */
  frames: { text: string; bytes: Buffer; connection: number; at: number }[];
  /** Every connection accepted, in order; `closedAt` once it closed. */
  connections: { socket: net.Socket; closedAt?: number }[];
  /** Stops accepting (a new connect is refused) and keeps the connections it has. */
  stopAccepting(): void;
  close(): Promise<void>;
}

export type FrameHandler = (frame: { text: string; bytes: Buffer; connection: number; socket: net.Socket }) => void;

/** Writes an ACK frame if the socket is still open. */
export const reply = (socket: net.Socket, text: string, encoding: BufferEncoding = 'utf8') => {
  if (!socket.destroyed) socket.write(frame(text, encoding));
};

export async function startReceivingPeer(onFrame: FrameHandler, port = 0): Promise<ReceivingPeer> {
  const frames: ReceivingPeer['frames'] = [];
  const connections: ReceivingPeer['connections'] = [];
  const server = net.createServer((socket) => {
    const entry: ReceivingPeer['connections'][number] = { socket };
    connections.push(entry);
    const connection = connections.length;
    socket.on('error', () => undefined);
    socket.once('close', () => {
      entry.closedAt = performance.now();
    });
    socket.on(
      'data',
      createFrameReader((bytes) => {
        const text = bytes.toString('utf8');
        frames.push({ text, bytes, connection, at: performance.now() });
        onFrame({ text, bytes, connection, socket });
      }),
    );
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    frames,
    connections,
    stopAccepting: () => void server.close(),
    async close() {
      const stopped = new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
      for (const { socket } of connections) socket.destroy();
      await stopped;
    },
  };
}
