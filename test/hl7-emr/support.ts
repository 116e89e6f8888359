// What the bundled HL7 EMR's tests share: messages built by hand as CONTRACT section 6 describes what the
// adapter sends, a plain @medplum/hl7 client to send them, and a notify target (Hl7Connections on a loopback
// socket, answering as each test tells it) that keeps what it was sent. Everything closes itself after each test.
import { createServer, type AddressInfo, type Server } from 'node:net';
import { Hl7Message } from '@medplum/core';
import { Hl7Client, Hl7Connection, type Hl7MessageEvent } from '@medplum/hl7';
import { afterEach } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { type Hl7EmrOptions, type RunningHl7Emr, startHl7Emr } from '../../src/hl7-emr/server.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

let sequence = 0;
/** A fresh MSH-10. */
export const controlId = (): string => `MSG${Date.now().toString(36)}${++sequence}`;

const MSH = (type: string, id: string) => `MSH|^~\\&|EMR-BRIDGE|SERVICE|EMR|HOSPITAL|20260115100000+0000||${type}|${id}|P|2.5.1`;

/** ADT^A28/A31/A04/A08 as the adapter sends it: PID-3 `<serviceId>^^^SERVICE^PI`, PID-5 name, PID-13 phone. */
export function adt(trigger: string, p: { id?: string; serviceId?: string; name?: string; phone?: string; authority?: string }): Hl7Message {
  const pid3 = p.serviceId ? `${p.serviceId}^^^${p.authority ?? 'SERVICE'}^PI` : '';
  return Hl7Message.parse(
    [
      MSH(`ADT^${trigger}^ADT_A05`, p.id ?? controlId()),
      `EVN|${trigger}|20260115100000+0000`,
      `PID|1||${pid3}||${p.name ?? 'Doe^Jane'}||||||||${p.phone ?? '+15550100001'}`,
      'PV1|1|N',
    ].join('\r'),
  );
}

/** SIU^S12–S15 as the adapter sends it: SCH-1 `<id>^SERVICE`, SCH-2 as given (empty until known), SCH-11.4 and TQ1-7 the start, SCH-25 the status. */
export function siu(
  trigger: string,
  a: { id?: string; appointmentId?: string; fillerId?: string; start?: string; status?: string; patientServiceId?: string },
): Hl7Message {
  const start = a.start ?? '20260120093000+0100';
  const sch1 = a.appointmentId === undefined ? '' : `${a.appointmentId}^SERVICE`;
  const sch = `SCH|${sch1}|${a.fillerId ?? ''}|||||||||^^^${start}||||||||||||||${a.status ?? 'Booked'}`;
  return Hl7Message.parse(
    [
      MSH(`SIU^${trigger}^SIU_S12`, a.id ?? controlId()),
      sch,
      `TQ1|1||||||${start}`,
      `PID|1||${a.patientServiceId ?? 'pat-1'}^^^SERVICE^PI||Doe^Jane||||||||+15550100001`,
      'PV1|1|N',
      'RGS|1',
      'AIP|1||doc-1^Smith^John',
      'AIL|1||loc-1',
    ].join('\r'),
  );
}

/** A field's text, e.g. field(msg, 'PID', 3). */
export const field = (msg: Hl7Message, segment: string, n: number): string => msg.getSegment(segment)?.getField(n)?.toString() ?? '';

/** MSA-1 of an acknowledgment. */
export const ackCode = (ack: Hl7Message): string => field(ack, 'MSA', 1);

export async function startEmr(opts: Partial<Hl7EmrOptions> = {}): Promise<RunningHl7Emr> {
  // A generous acknowledgment timeout: on a busy machine a short one resends what was already taken.
  const emr = await startHl7Emr({ logger: silentLogger(), ackTimeoutMs: 5_000, retry: { baseMs: 20, maxMs: 200 }, ...opts });
  cleanups.push(() => emr.close());
  return emr;
}

/** A plain Hl7Client to the EMR. */
export function clientOf(emr: { port: number }): Hl7Client {
  const client = new Hl7Client({ host: '127.0.0.1', port: emr.port, connectTimeout: 2_000 });
  cleanups.push(() => client.close());
  return client;
}

/**
 * Sends and waits for the acknowledgment; rejects (`timed out`) after `timeoutMs`. The timer is ours, not
 * sendAndWait's timeoutMs: that one is not cleared when the answer comes and would outlive the test.
 */
export async function send(client: Hl7Client, msg: Hl7Message, timeoutMs = 3_000): Promise<Hl7Message> {
  const answer = client.sendAndWait(msg);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([answer, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export type TargetAnswer = 'AA' | 'AE' | 'AR' | 'none';

export interface NotifyTarget {
  port: number;
  url: string;
  /** Everything it was sent, repeats included, in order. */
  received: Hl7Message[];
  /** For each of `received`, the connection it came on (0 for the first connection made, 1 for the next, …). */
  receivedOn: number[];
  /** How it answers the n-th message (0-based) it receives; AA unless told. */
  answer: (msg: Hl7Message, n: number) => TargetAnswer;
  close(): Promise<void>;
}

/** A free loopback port, not listened on. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/**
 * The adapter's side of the line: @medplum/hl7 Hl7Connections on a socket bound to loopback (Hl7Server.start
 * binds every interface), acknowledging with Hl7Message.buildAck.
 */
export async function startTarget(port = 0): Promise<NotifyTarget> {
  const sockets = new Set<import('node:net').Socket>();
  const target: NotifyTarget = { port: 0, url: '', received: [], receivedOn: [], answer: () => 'AA', close: async () => undefined };
  let accepted = 0;
  const server: Server = createServer((socket) => {
    const connectionNo = accepted++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    const connection = new Hl7Connection(socket);
    connection.addEventListener('message', ({ message }: Hl7MessageEvent) => {
      target.receivedOn.push(connectionNo);
      const code = target.answer(message, target.received.push(message) - 1);
      if (code !== 'none') connection.send(message.buildAck({ ackCode: code }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  target.port = (server.address() as AddressInfo).port;
  target.url = `mllp://127.0.0.1:${target.port}`;
  let closed = false;
  target.close = async () => {
    if (closed) return;
    closed = true;
    await new Promise((resolve) => {
      server.close(resolve);
      for (const s of sockets) s.destroy();
    });
  };
  cleanups.push(() => target.close());
  return target;
}

/** Polls until `probe` gives something (a bounded wait, never a fixed sleep). */
export { waitFor } from '../support/wait.ts';
