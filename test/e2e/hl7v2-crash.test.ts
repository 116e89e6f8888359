// The HL7 v2 module under SIGKILL: the adapter (`emr-bridge serve`, EMR_PROTOCOL=hl7v2) runs as a child so that it
// can be killed mid-exchange and restarted on the same data folder and ports, beside the simulator and the bundled
// HL7 EMR in this process. Killed after it took an MDM but before the EMR saw the AA, and killed while it waited for
// the ACK of an S12 the EMR had already applied: after the restart nothing is lost, the document reaches the
// patient once, and the EMR holds one appointment, every S12 for it under one MSH-10.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startChild, type Child } from '../../bench/support/child.ts';
import { startHl7Emr, type RunningHl7Emr } from '../../src/hl7-emr/server.ts';
import { silentLogger } from '../../src/logger.ts';
import { startSimulatorServer } from '../../src/simulator/server.ts';
import { hl7AdapterSettings } from '../support/hl7-stack.ts';
import { ADMIN, freePort, json, subscribeClinic } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';

const NO_QUIET_HOURS = { timeZone: 'UTC', quietHours: { start: '00:00', end: '00:00' } };

interface Frame {
  /** MSH-9's type and trigger (`MDM^T02`), or `ACK`. */
  type: string;
  /** MSH-10 of a message; MSA-2 (the acknowledged MSH-10) of an ACK. */
  controlId: string;
  /** MSA-1 of an ACK. */
  ack?: string;
}

const VT = 0x0b;
const FS = 0x1c;
const CR = 0x0d;

function readFrame(bytes: Buffer): Frame {
  const segments = bytes.toString('latin1').split('\r');
  const msh = (segments[0] ?? '').split('|');
  const msa = segments.find((s) => s.startsWith('MSA|'))?.split('|');
  const [type = '', trigger = ''] = (msh[8] ?? '').split('^');
  if (msa) return { type: 'ACK', controlId: msa[2] ?? '', ack: msa[1] ?? '' };
  return { type: `${type}^${trigger}`, controlId: msh[9] ?? '' };
}

/** Cuts whole MLLP frames out of a stream, handing each on with its bytes (framing included). */
function framer(onFrame: (frame: Frame, raw: Buffer) => void): (chunk: Buffer) => void {
  let buf = Buffer.alloc(0);
  return (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      const start = buf.indexOf(VT);
      const end = start === -1 ? -1 : buf.indexOf(Buffer.from([FS, CR]), start);
      if (end === -1) return;
      const raw = buf.subarray(start, end + 2);
      buf = buf.subarray(end + 2);
      onFrame(readFrame(raw.subarray(1, -2)), raw);
    }
  };
}

/**
 * Between the bundled EMR's notifier and the adapter's listener: passes frames both ways and logs them, except that
 * once `holdAckOf` is set, the adapter's acknowledgment of a message of that type is kept from the EMR. The adapter
 * acknowledges only what it has committed, so a held ACK is the moment the adapter has the message and the EMR does
 * not know it: the window a kill must hit. `shut` cuts the feed (the EMR's notifier retries until `open`).
 */
async function startFeedProxy(targetPort: number) {
  const sockets = new Set<Socket>();
  const seen: { from: 'emr' | 'adapter'; frame: Frame }[] = [];
  let holdType: string | undefined;
  let shut = false;
  let onHeld: ((frame: Frame) => void) | undefined;
  const held = new Promise<Frame>((resolve) => {
    onHeld = resolve;
  });
  const server: Server = createServer((down) => {
    if (shut) {
      down.destroy();
      return;
    }
    const up = connect(targetPort, '127.0.0.1');
    for (const s of [down, up]) {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    // One side gone, the other goes too: the EMR sees the adapter's death as a closed connection.
    down.once('close', () => up.destroy());
    up.once('close', () => down.destroy());
    const types = new Map<string, string>();
    let holding = false;
    down.on(
      'data',
      framer((frame, raw) => {
        seen.push({ from: 'emr', frame });
        types.set(frame.controlId, frame.type);
        up.write(raw);
      }),
    );
    up.on(
      'data',
      framer((frame, raw) => {
        seen.push({ from: 'adapter', frame });
        if (holdType !== undefined && types.get(frame.controlId) === holdType) holding = true;
        if (holding) {
          onHeld?.(frame);
          return;
        }
        down.write(raw);
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    seen,
    /** Keeps the adapter's next ACK of a `type` message (and all after it on that connection) from the EMR. */
    holdAckOf(type: string): Promise<Frame> {
      holdType = type;
      return held;
    },
    /** New connections pass everything again. */
    release() {
      holdType = undefined;
    },
    /** Drops every connection and refuses new ones: nothing reaches the adapter from the EMR. */
    shut() {
      shut = true;
      for (const s of sockets) s.destroy();
    },
    open() {
      shut = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

type FeedProxy = Awaited<ReturnType<typeof startFeedProxy>>;

interface World {
  dir: string;
  sim: Awaited<ReturnType<typeof startSimulatorServer>>;
  emr: RunningHl7Emr;
  proxy: FeedProxy;
  clinicId: string;
  env: Record<string, string | undefined>;
  adapter?: Child;
  adapterUrl: string;
}

let world: World | undefined;
afterEach(async () => {
  const w = world;
  world = undefined;
  if (!w) return;
  await w.adapter?.stop('SIGKILL');
  await w.emr.close();
  await w.proxy.close();
  await w.sim.close();
  rmSync(w.dir, { recursive: true, force: true });
});

/** The simulator, the bundled HL7 EMR (its feeds through the proxy) and the settings of an adapter between them. */
async function startWorld(): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-hl7-crash-'));
  const sim = await startSimulatorServer({ logger: silentLogger() });
  // Fixed ports: the restarted adapter must be where the subscription and the EMR's feeds point.
  const [port, listenPort] = [await freePort(), await freePort()];
  const proxy = await startFeedProxy(listenPort);
  const emr = await startHl7Emr({ port: 0, notify: `mllp://127.0.0.1:${proxy.port}`, retry: { baseMs: 50, maxMs: 500 }, logger: silentLogger() });
  const subscription = await subscribeClinic(sim.url, port, { clinic: NO_QUIET_HOURS });
  const { clinicId } = subscription;
  const env = {
    NODE_ENV: undefined,
    DATABASE_URL: undefined,
    DATABASE_PATH: undefined,
    ADMIN_PORT: undefined,
    ADMIN_HOST: undefined,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ...hl7AdapterSettings({ port, dir, simUrl: sim.url, subscription, emrUrl: emr.url, listenPort }),
    // Longer than any wait below: the adapter killed while waiting for an ACK is still waiting when it dies.
    HL7_ACK_TIMEOUT_MS: '10000',
    PUSHER_POLL_MS: '100',
  };
  return { dir, sim, emr, proxy, clinicId, env, adapterUrl: `http://127.0.0.1:${port}` };
}

async function startAdapterChild(w: World): Promise<Child> {
  w.adapter = await startChild(['bin/emr-bridge.js', 'serve'], { env: w.env, timeoutMs: 30_000 });
  return w.adapter;
}

const simPost = <T>(w: World, path: string, body: unknown = {}) => json<T>('POST', `${w.sim.url}${path}`, body).then((r) => r.body);
const simGet = <T>(w: World, path: string) => json<T>('GET', `${w.sim.url}${path}`).then((r) => r.body);
const admin = <T>(w: World, path: string) => json<T>('GET', `${w.adapterUrl}/admin${path}`, undefined, { authorization: `Bearer ${ADMIN}` });

/** Every S12 the EMR took for one appointment went under one MSH-10 (a resend, never a new message). */
function expectOneS12ControlId(w: World): void {
  const s12 = w.emr.received().filter((m) => m.type === 'SIU^S12');
  expect(s12.length).toBeGreaterThanOrEqual(1);
  expect(new Set(s12.map((m) => m.controlId)).size).toBe(1);
}

interface Snapshot {
  serviceId: string;
  patient: { serviceId: string; phone: string };
}

describe('the HL7 v2 adapter killed with SIGKILL', () => {
  it('takes an MDM it had committed but not yet acknowledged to the EMR once, and the patient gets the document once', async () => {
    const w = await startWorld();
    world = w;
    const first = await startAdapterChild(w);
    const booked = await simPost<Snapshot>(w, '/_sim/appointments', { clinicId: w.clinicId });
    await waitFor(() => w.emr.appointments().find((a) => a.serviceId === booked.serviceId), 20_000);
    await waitFor(() => (w.emr.pendingNotifications() === 0 ? true : undefined), 20_000);

    const held = w.proxy.holdAckOf('MDM^T02');
    const pdf = Buffer.from('%PDF-1.4\n% a lab report filed across a crash\n%%EOF\n');
    const documentId = w.emr.fileDocument({ patientServiceId: booked.patient.serviceId, documentType: 'lab_report', label: 'Ferritin', pdf });
    const ack = await held;
    // The adapter has committed the document (it acknowledges nothing before); the EMR has not heard so.
    await first.stop('SIGKILL');
    expect(ack.ack).toBe('AA');
    expect(w.emr.pendingNotifications()).toBeGreaterThan(0);

    w.proxy.release();
    await startAdapterChild(w);
    // The EMR, never having had the AA, files the same MDM again; the adapter answers AA and does not take it twice.
    await waitFor(() => (w.emr.pendingNotifications() === 0 ? true : undefined), 30_000);
    await waitFor(
      async () => ((await admin<{ document?: { status: string } }>(w, `/documents/${documentId}`)).body.document?.status === 'SENT' ? true : undefined),
      30_000,
    );
    const mdm = w.proxy.seen.filter((s) => s.from === 'emr' && s.frame.type === 'MDM^T02');
    expect(mdm.length).toBeGreaterThanOrEqual(2);
    expect(new Set(mdm.map((s) => s.frame.controlId)).size).toBe(1);

    const messages = await simGet<{ text: string }[]>(w, `/_sim/messages?phone=${encodeURIComponent(booked.patient.phone)}`);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.text).toContain('Ferritin');
    const listed = (await admin<{ documents: { externalId: string }[] }>(w, '/documents')).body.documents;
    expect(listed.filter((d) => d.externalId === documentId)).toHaveLength(1);
    const detail = (await admin<{ history: { status: string }[] }>(w, `/documents/${documentId}`)).body;
    expect(detail.history.filter((h) => h.status === 'SENT')).toHaveLength(1);
    expect(w.emr.appointments().filter((a) => a.serviceId === booked.serviceId)).toHaveLength(1);
    expectOneS12ControlId(w);
  }, 90_000);

  it('sends an S12 the EMR applied but never acknowledged again under the same MSH-10, and the EMR holds one appointment', async () => {
    const w = await startWorld();
    world = w;
    const first = await startAdapterChild(w);
    // The patient first, acknowledged: the S12 is then the next message the adapter sends.
    const patient = await simPost<{ serviceId: string }>(w, '/_sim/patients', { clinicId: w.clinicId });
    await waitFor(() => w.emr.received().find((m) => m.type === 'ADT^A28' && m.ack === 'AA'), 20_000);
    await waitFor(async () => {
      const events = (await admin<{ events: { state: string }[] }>(w, `/events?serviceId=${patient.serviceId}`)).body.events;
      return events.length > 0 && events.every((e) => e.state === 'applied') ? true : undefined;
    }, 20_000);

    await waitFor(() => (w.emr.pendingNotifications() === 0 ? true : undefined), 20_000);
    // Without the EMR's SIU feed the adapter cannot learn the filler id before it restarts, and so must send the same
    // S12 again. (With the feed it may learn it first and finish the event with an S14 to the appointment the EMR
    // named: as safe, but not the path under test.)
    w.proxy.shut();
    w.emr.setFault({ mode: 'silent', count: 1 });
    const booked = await simPost<Snapshot>(w, '/_sim/appointments', { clinicId: w.clinicId, patient: { serviceId: patient.serviceId } });
    // The EMR has applied the S12 and answers nothing; the adapter waits (HL7_ACK_TIMEOUT_MS, 10 s) and dies waiting.
    const unanswered = await waitFor(() => w.emr.received().find((m) => m.type === 'SIU^S12'), 20_000);
    await first.stop('SIGKILL');
    expect(unanswered.ack).toBe('none');
    expect(w.emr.appointments().filter((a) => a.serviceId === booked.serviceId)).toHaveLength(1);

    await startAdapterChild(w);
    await waitFor(async () => {
      const events = (await admin<{ events: { eventType: string; state: string }[] }>(w, `/events?serviceId=${booked.serviceId}`)).body.events;
      return events.some((e) => e.eventType === 'appointment.created' && e.state === 'applied') ? true : undefined;
    }, 30_000);
    const s12 = w.emr.received().filter((m) => m.type === 'SIU^S12');
    expect(s12.length).toBeGreaterThanOrEqual(2);
    expect(s12.at(-1)).toMatchObject({ ack: 'AA', duplicate: true });
    expectOneS12ControlId(w);
    expect(w.emr.appointments().filter((a) => a.serviceId === booked.serviceId)).toHaveLength(1);
    w.proxy.open();
    // The filler id the EMR assigned before the crash is the one the service learns.
    const fillerId = w.emr.appointments().find((a) => a.serviceId === booked.serviceId)!.fillerId;
    await waitFor(
      async () =>
        (await simGet<{ appointment: { externalId: string | null } }>(w, `/_sim/appointments/${booked.serviceId}`)).appointment.externalId === fillerId ||
        undefined,
      20_000,
    );
  }, 90_000);
});
