// Loopback proxies that put a fixed network latency in front of an EMR, for ../emr-latency.ts: each request (HTTP,
// for FHIR) or each MLLP frame from the adapter (HL7 v2) waits `delayMs` before it goes on, and the proxy counts
// the calls by kind and the calls in flight over time. The HTTP one can also answer a share of the calls 429 with
// Retry-After: 1 itself, as an EMR's gateway throttling the adapter would.
import { Agent, createServer as createHttpServer, type IncomingHttpHeaders, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, createServer as createNetServer, type Server, type Socket } from 'node:net';
import { createFrameGate } from '../../src/emr/hl7v2/mllp/frame-gate.ts';
import { parseMllpUrl } from '../../src/emr/hl7v2/mllp/endpoint.ts';

/** Epoch milliseconds with sub-millisecond precision: comparable with the times the adapter writes in its database. */
export const epochMs = (): number => performance.timeOrigin + performance.now();

export interface ProxyStats {
  /** Calls since the last reset (answered 429 by the proxy included). */
  calls: number;
  /** By kind: `POST Patient`, `GET Appointment`, `POST /` (a Bundle to the base), `ADT^A28`, … */
  byKind: Record<string, number>;
  /** Calls the proxy answered 429 itself. */
  refused: number;
  /** Calls in flight over the window: the most at once, and the time-weighted mean. */
  maxInFlight: number;
  meanInFlight: number;
  /** Mean time from a call's arrival at the proxy to its answer leaving it (the delay included), ms. */
  meanCallMs: number;
}

export interface ProxySettings {
  delayMs: number;
  /** Every `refuseEvery`-th call (counted from the last reset) is answered 429 with Retry-After: 1, not forwarded. HTTP only. */
  refuseEvery?: number;
}

export interface LatencyProxy {
  /** `http://127.0.0.1:<port>` or `mllp://127.0.0.1:<port>`. */
  url: string;
  configure(settings: ProxySettings): void;
  /** Forgets every count so far: what follows is the measured run. */
  reset(): void;
  /** The counts since the reset, the calls in flight over [from, to] (epoch ms). */
  stats(from: number, to: number): ProxyStats;
  close(): Promise<void>;
}

/**
 * Calls in flight as a step function of time, kept as its changes, so the level over any window (the run's, known
 * only once it is over) can be read afterwards.
 */
function createInFlightMeter() {
  let open = 0;
  let times: number[] = [];
  let deltas: number[] = [];
  let durations = 0;
  let ended = 0;
  const step = (at: number, delta: number) => {
    open += delta;
    times.push(at);
    deltas.push(delta);
  };
  return {
    begin: (at: number) => step(at, 1),
    end(began: number, at: number): void {
      step(at, -1);
      durations += at - began;
      ended++;
    },
    /** Calls still open carry over as the level the new record starts from. */
    reset(): void {
      times = [epochMs()];
      deltas = [open];
      durations = 0;
      ended = 0;
    },
    read(from: number, to: number): { max: number; mean: number; meanCallMs: number } {
      let level = 0;
      let max = 0;
      let area = 0;
      let last = from;
      // Pushed as they happen, so in time order.
      for (let i = 0; i < times.length && times[i]! <= to; i++) {
        const t = times[i]!;
        if (t > from) {
          area += level * (t - last);
          last = t;
        }
        level += deltas[i]!;
        if (t >= from) max = Math.max(max, level);
      }
      area += level * Math.max(0, to - last);
      return { max: Math.max(max, level), mean: to > from ? area / (to - from) : 0, meanCallMs: ended ? durations / ended : 0 };
    },
  };
}

function createCounts() {
  let byKind: Record<string, number> = {};
  let calls = 0;
  let refused = 0;
  return {
    /** Counts one call of `kind`; returns its number since the reset, from 1. */
    add(kind: string): number {
      byKind[kind] = (byKind[kind] ?? 0) + 1;
      return ++calls;
    },
    refuse(): void {
      refused++;
    },
    reset(): void {
      byKind = {};
      calls = 0;
      refused = 0;
    },
    read: () => ({ calls, byKind: { ...byKind }, refused }),
  };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

/** Runs `work` after `ms`, or now when there is no delay (a 0 ms timer still costs a millisecond). */
const after = (ms: number, work: () => void) => (ms > 0 ? void setTimeout(work, ms) : work());

function closeServer(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const s of sockets) s.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

function track(server: Server): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  return sockets;
}

// ---- HTTP (FHIR) ---------------------------------------------------------------------------------------------

/** Connection-level headers are the proxy's own business on each side, never passed through. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', 'te', 'trailer']);

const endToEnd = (headers: IncomingHttpHeaders): IncomingHttpHeaders => Object.fromEntries(Object.entries(headers).filter(([k]) => !HOP_BY_HOP.has(k)));

/** `POST Patient`, `GET Appointment?…` (a search), `PATCH Appointment/{id}`, `POST /` (a transaction or batch), `GET metadata`. */
export function fhirCallKind(method: string | undefined, url: string | undefined): string {
  const [path, query] = (url ?? '/').split('?');
  const [type, id] = path!.split('/').filter((s) => s !== '');
  // A read or change of one record, a search, or a call at the base (a transaction).
  const what = id !== undefined ? `${type}/{id}` : query !== undefined ? `${type}?…` : (type ?? '/');
  return `${method ?? 'GET'} ${what}`;
}

const THROTTLED = JSON.stringify({
  resourceType: 'OperationOutcome',
  issue: [{ severity: 'error', code: 'throttled', diagnostics: 'too many requests (latency proxy)' }],
});

/** An HTTP proxy in front of `target` (an http:// base; its path is kept as the requests give it). */
export async function startHttpLatencyProxy(target: string, settings: ProxySettings): Promise<LatencyProxy> {
  const upstream = new URL(target);
  const { state, controls } = proxyState(settings);
  const { counts, meter } = state;
  // Keep-alive both ways, no cap: each call waits on its own timer, so calls that arrive together go on together.
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const refuse = (res: ServerResponse) => {
    counts.refuse();
    res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/fhir+json' });
    res.end(THROTTLED);
  };
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const out = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: endToEnd(req.headers), agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
      },
    );
    out.once('error', () => res.destroy());
    req.pipe(out);
  };
  const server = createHttpServer((req, res) => {
    const began = epochMs();
    meter.begin(began);
    res.once('close', () => meter.end(began, epochMs()));
    const n = counts.add(fhirCallKind(req.method, req.url));
    const { delayMs, refuseEvery } = state.current;
    after(delayMs, () => {
      if (refuseEvery && n % refuseEvery === 0) {
        req.resume();
        refuse(res);
      } else forward(req, res);
    });
  });
  server.keepAliveTimeout = 60_000;
  const sockets = track(server);
  const port = await listen(server);
  return {
    url: `http://127.0.0.1:${port}`,
    ...controls,
    async close() {
      await closeServer(server, sockets);
      agent.destroy();
    },
  };
}

function statsOf(counts: ReturnType<typeof createCounts>, meter: ReturnType<typeof createInFlightMeter>, from: number, to: number): ProxyStats {
  const inFlight = meter.read(from, to);
  return { ...counts.read(), maxInFlight: inFlight.max, meanInFlight: inFlight.mean, meanCallMs: inFlight.meanCallMs };
}

/** What both proxies share: their settings (changed between runs), their counts and meter, reset and read. */
function proxyState(settings: ProxySettings) {
  const state = { current: settings, counts: createCounts(), meter: createInFlightMeter() };
  const controls: Pick<LatencyProxy, 'configure' | 'reset' | 'stats'> = {
    configure: (s) => {
      state.current = s;
    },
    reset: () => {
      state.counts.reset();
      state.meter.reset();
    },
    stats: (from, to) => statsOf(state.counts, state.meter, from, to),
  };
  return { state, controls };
}

// ---- MLLP (HL7 v2) -------------------------------------------------------------------------------------------

/** Each whole frame (VT … FS CR) in bytes the frame gate delivered (they end with the last FS CR). */
function framesIn(bytes: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  let start = 0;
  for (let fs = bytes.indexOf(0x1c); fs !== -1; fs = bytes.indexOf(0x1c, fs + 1)) {
    if (bytes[fs + 1] !== 0x0d) continue;
    frames.push(bytes.subarray(start, fs + 2));
    start = fs + 2;
  }
  return frames;
}

/** MSH-9's type and trigger (`ADT^A28`), read from the frame's first segment. */
export function hl7MessageKind(frame: Buffer): string {
  const text = frame.toString('latin1', frame.indexOf(0x0b) + 1, Math.min(frame.length, 512));
  const msh = text.split('\r')[0] ?? '';
  if (!msh.startsWith('MSH')) return 'unreadable';
  const fields = msh.split(msh[3]!);
  const components = (fields[8] ?? '').split(msh[4] ?? '^');
  return components.slice(0, 2).join('^') || 'unknown';
}

/**
 * Frames written in the order they came, each not before its due time: a timer for the head only, so frames never
 * overtake one another, even when a timer fires late or the delay changes between two of them.
 */
function createDelayLine(write: (frame: Buffer) => void) {
  const queue: { frame: Buffer; due: number }[] = [];
  let timer: NodeJS.Timeout | undefined;
  const pump = () => {
    timer = undefined;
    while (queue.length > 0 && queue[0]!.due <= epochMs()) write(queue.shift()!.frame);
    if (queue.length > 0) timer = setTimeout(pump, Math.max(0, queue[0]!.due - epochMs()));
  };
  return {
    push(frame: Buffer, due: number): void {
      queue.push({ frame, due });
      if (!timer) pump();
    },
    clear(): void {
      queue.length = 0;
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/** Big enough for any message the adapter sends; the gate is here to find frame ends, not to refuse. */
const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/**
 * An MLLP proxy in front of `target` (mllp://host:port): frames from the adapter reach the EMR delayMs after they
 * reached the proxy, in order; the EMR's bytes come back at once. A message is in flight from its frame until the
 * EMR's next frame on that connection (its acknowledgment).
 */
export async function startMllpLatencyProxy(target: string, settings: ProxySettings): Promise<LatencyProxy> {
  const { host, port: targetPort } = parseMllpUrl(target);
  const { state, controls } = proxyState(settings);
  const { counts, meter } = state;
  const server = createNetServer((client) => {
    const emr = connect(targetPort, host);
    const fromAdapter = createFrameGate(MAX_FRAME_BYTES);
    const fromEmr = createFrameGate(MAX_FRAME_BYTES);
    /** When each message still waiting for its acknowledgment reached the proxy, oldest first. */
    const waiting: number[] = [];
    const outgoing = createDelayLine((frame) => emr.write(frame));
    const drop = () => {
      outgoing.clear();
      client.destroy();
      emr.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      const got = fromAdapter.push(chunk);
      if (got.kind === 'oversize') return drop();
      if (got.kind === 'hold') return;
      for (const frame of framesIn(got.bytes)) {
        const at = epochMs();
        counts.add(hl7MessageKind(frame));
        meter.begin(at);
        waiting.push(at);
        outgoing.push(frame, at + state.current.delayMs);
      }
    });
    emr.on('data', (chunk: Buffer) => {
      client.write(chunk);
      const got = fromEmr.push(chunk);
      if (got.kind !== 'deliver') return;
      const acks = framesIn(got.bytes).length;
      for (let i = 0; i < acks && waiting.length > 0; i++) meter.end(waiting.shift()!, epochMs());
    });
    const closed = () => {
      const at = epochMs();
      for (const began of waiting.splice(0)) meter.end(began, at);
      drop();
    };
    client.once('close', closed);
    emr.once('close', closed);
    client.on('error', () => undefined);
    emr.on('error', () => undefined);
  });
  const sockets = track(server);
  const port = await listen(server);
  return {
    url: `mllp://127.0.0.1:${port}`,
    ...controls,
    close: () => closeServer(server, sockets),
  };
}
