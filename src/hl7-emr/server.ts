// The bundled HL7 EMR on its ports: a stand-in for a hospital's interface engine, for `emr-bridge hl7-emr`,
// tests and QA. It acknowledges what it receives over MLLP (original mode), applies ADT and SIU (assigning
// MRNs and filler ids), sends its own ADT/SIU notifications and the documents it files to `notify`, plays
// the faults it is told to, and shows what it holds through accessors and an optional HTTP control API.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { Hl7Message } from '@medplum/core';
import { systemClock, toIso, type Clock } from '../clock.ts';
import { ValidationError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { buildAck, type Refusal } from './ack.ts';
import { type ControlTarget, createControlApp } from './control-api.ts';
import { createDocumentFiler, type DocumentTypeCodes } from './documents.ts';
import { createFaultSwitch, type FaultSwitch } from './faults.ts';
import { createControlIds, headerOf } from './hl7-text.ts';
import { type IntakeContext, takeMessage } from './intake.ts';
import { listenMllp } from './listener.ts';
import type { AckCode } from './model.ts';
import { startNotifier, type Notifier } from './notifier.ts';
import type { OutboundContext } from './outbound.ts';
import { createEmrState, type EmrState } from './state.ts';

export interface Hl7EmrOptions {
  /** Address to listen on (MLLP and control API); default 127.0.0.1. */
  host?: string;
  /** MLLP port; default 0 (a free one). */
  port?: number;
  /** `mllp://host:port`: where notifications and documents go; absent: none are sent. */
  notify?: string;
  /**
   * How many connections to `notify` carry them at once (1 to 16; default 1: one message at a time, in queue
   * order). Each message goes on the connection of the entity it is about, so one entity's stay in order.
   */
  notifyConnections?: number;
  /** JSON-lines file that keeps patients, appointments, applied MSH-10s and the send queue across restarts. */
  dataFile?: string;
  /** Port of the HTTP control API (/_emr/); absent: no control API. */
  controlPort?: number;
  /** The service's assigning authority (HL7_ASSIGNING_AUTHORITY); default SERVICE. */
  assigningAuthority?: string;
  /** TXA-2 type codes; default LAB and RX. */
  documentTypeCodes?: Partial<DocumentTypeCodes>;
  /** How long a notification waits for its acknowledgment; default 10 s. */
  ackTimeoutMs?: number;
  /** Backoff between tries of a notification; default 500 ms doubling to 30 s. */
  retry?: { baseMs?: number; maxMs?: number };
  clock?: Clock;
  logger: Logger;
}

export interface RunningHl7Emr extends ControlTarget {
  /** `mllp://127.0.0.1:<port>` (the advertised address). */
  url: string;
  port: number;
  /** The control API's base (`http://…`), when it runs. */
  controlUrl?: string;
  close(): Promise<void>;
}

/** `mllp://host:port` to its host and port; a ValidationError naming `notify` otherwise. */
export function parseMllpUrl(url: string): { host: string; port: number } {
  const parsed = URL.parse(url);
  if (parsed?.protocol !== 'mllp:' || !parsed.hostname || !parsed.port) throw new ValidationError(`notify must be mllp://host:port, got ${url}`, 'notify');
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(parsed.port) };
}

// A wildcard bind is reached on loopback; a specific address is reached on itself.
function advertisedHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

interface Handling {
  state: EmrState;
  intake: IntakeContext;
  faults: FaultSwitch;
  clock: Clock;
  nextControlId(): string;
  notifier: Notifier | undefined;
  stopping: AbortSignal;
  logger: Logger;
}

/** One received message: recorded, faulted or applied, acknowledged (or not, or late). */
async function handle(h: Handling, msg: Hl7Message): Promise<Hl7Message | undefined> {
  const { type, trigger, controlId } = headerOf(msg);
  const at = h.clock.now();
  const fault = h.faults.take();
  const record = (ack: AckCode | 'none', duplicate: boolean) =>
    h.state.recordReceived({ type: trigger ? `${type}^${trigger}` : type, controlId, at: toIso(at), ack, duplicate });
  const ack = (code: AckCode, refusal?: Refusal) =>
    buildAck({ received: msg, code, ...(refusal ? { refusal } : {}), controlId: h.nextControlId(), at: h.clock.now() });
  if (fault?.mode === 'AE' || fault?.mode === 'AR') {
    record(fault.mode, false);
    h.logger.info({ type, trigger, controlId, ack: fault.mode }, 'HL7 message refused (fault)');
    return ack(fault.mode, { field: '', code: '207', text: `fault injected: ${fault.mode}` });
  }
  let result: ReturnType<typeof takeMessage>;
  try {
    result = takeMessage(h.intake, msg);
  } catch (err) {
    h.logger.error({ type, trigger, controlId, err: (err as Error).message }, 'HL7 message not applied: store failed');
    record('AR', false);
    return ack('AR', { field: '', code: '207', text: 'the EMR could not store this message' });
  }
  const duplicate = result.code === 'AA' && result.duplicate;
  record(fault?.mode === 'silent' ? 'none' : result.code, duplicate);
  h.logger.info(
    { type, trigger, controlId, ack: result.code, duplicate, ...(result.code === 'AE' ? { field: result.refusal.field } : {}) },
    'HL7 message taken',
  );
  const answer = result.code === 'AA' ? ack('AA') : ack('AE', result.refusal);
  if (fault?.mode === 'silent') return undefined;
  if (fault?.mode === 'late') {
    await delay(fault.delayMs, undefined, { signal: h.stopping }).catch(() => undefined);
    if (h.stopping.aborted) return undefined;
  }
  return answer;
}

function listenHttp(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

export async function startHl7Emr(opts: Hl7EmrOptions): Promise<RunningHl7Emr> {
  const clock = opts.clock ?? systemClock;
  const host = opts.host ?? '127.0.0.1';
  const assigningAuthority = opts.assigningAuthority ?? 'SERVICE';
  const target = opts.notify ? parseMllpUrl(opts.notify) : undefined;
  const state = createEmrState(opts.dataFile);
  const faults = createFaultSwitch();
  const nextControlId = createControlIds(clock);
  const outbound: OutboundContext | undefined = target ? { assigningAuthority, nextControlId, clock } : undefined;
  const notifier = target
    ? startNotifier({
        target,
        state,
        logger: opts.logger,
        ...(opts.ackTimeoutMs !== undefined ? { ackTimeoutMs: opts.ackTimeoutMs } : {}),
        ...(opts.retry ? { retry: opts.retry } : {}),
        ...(opts.notifyConnections !== undefined ? { connections: opts.notifyConnections } : {}),
      })
    : undefined;
  const stopping = new AbortController();
  const intake: IntakeContext = { state, assigningAuthority, ...(outbound ? { outbound } : {}) };
  const handling: Handling = { state, intake, faults, clock, nextControlId, notifier, stopping: stopping.signal, logger: opts.logger };
  const filer = createDocumentFiler({
    state,
    ...(outbound ? { outbound } : {}),
    typeCodes: { labReport: opts.documentTypeCodes?.labReport ?? 'LAB', prescription: opts.documentTypeCodes?.prescription ?? 'RX' },
  });
  const closers: (() => Promise<void>)[] = [async () => notifier?.close()];
  // Late acknowledgments are let go first; then the newest part closes first.
  const closeAll = async () => {
    stopping.abort();
    for (const c of closers.splice(0).reverse()) await c();
  };
  try {
    const listener = await listenMllp({ host, port: opts.port ?? 0, handle: (msg) => handle(handling, msg), logger: opts.logger });
    closers.push(() => listener.close());
    const emr: RunningHl7Emr = {
      url: `mllp://${advertisedHost(host)}:${listener.port}`,
      port: listener.port,
      patients: () => state.patients(),
      appointments: () => state.appointments(),
      received: () => state.received(),
      pendingNotifications: () => state.pending(),
      fileDocument: (req) => filer.fileDocument(req),
      fileLabResult: (req) => filer.fileLabResult(req),
      setFault: (f) => faults.set(f),
      fault: () => faults.current(),
      close: closeAll,
    };
    if (opts.controlPort !== undefined) {
      const http = createServer(createControlApp(emr, opts.logger).callback());
      const controlPort = await listenHttp(http, opts.controlPort, host);
      closers.push(
        () =>
          new Promise<void>((resolve) => {
            http.close(() => resolve());
            http.closeAllConnections();
          }),
      );
      emr.controlUrl = `http://${advertisedHost(host)}:${controlPort}`;
    }
    return emr;
  } catch (err) {
    await closeAll();
    throw err;
  }
}
