// The system of one ../emr-latency.ts run, each part a process of its own as in production: the simulator
// (`emr-bridge simulator`), the bundled EMR (`emr-bridge fhir-server`, or ./bundled-emr-process.ts for what its
// command line does not take and for the HL7 EMR with its control API), a latency proxy in front of the EMR
// (./latency-proxy.ts) and `emr-bridge serve` reaching the EMR through the proxy and the simulator directly.
// It also builds the clinic and the outage: the clinic's doctors, locations and known patients go through the
// adapter first; then the adapter stops, the backlog is booked, and the simulator, failing to deliver, pauses the
// subscription; the adapter starts again, and the backlog is sent at once, as after an outage. By the simulator
// (a resume) it would go one delivery at a time, oldest first, as CONTRACT section 3 has it: 70 to 270 deliveries/s
// on this machine, under the rates measured. So by default this process sends the same events itself, signed with
// the subscription's secret, DELIVERY_CONCURRENCY at a time (./load.ts), their bodies built from the snapshots the
// simulator answered as it booked them (as ./hl7-bench-stack.ts does); the simulator keeps its own copies queued.
// The adapter's progress is read from its SQLite file by a read-only connection of this process (a /metrics scrape
// would be work for its event loop), as ./hl7-bench-stack.ts reads its outbox. With `vendor` the EMR is the bundled
// FHIR server's vendor profile (./vendor-bench.ts): the clinic's doctors and rooms are its roster, mapped by the
// crosswalk import before anything is booked, every appointment starts on a free Slot of its own, and the backlog
// carries changes too (a reschedule to another free Slot, or a status), after the bookings.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { requestJson } from '../../src/http/json-request.ts';
import { signedWebhookHeaders } from '../../src/signature/webhook-signature.ts';
import { type Child, startChild } from './child.ts';
import { cpuSeconds, freePort, sleep } from './hl7-bench-stack.ts';
import { type LatencyProxy, startHttpLatencyProxy, startMllpLatencyProxy } from './latency-proxy.ts';
import { runLoad } from './load.ts';
import { type VendorBench, vendorChanges, writeVendorBench } from './vendor-bench.ts';

const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'silent';
/**
 * Connections the bundled HL7 EMR sends its notifications over (`emr-bridge hl7-emr --notify-connections`): 8, as
 * many as the adapter's send links there (../emr-latency.ts), an engine with that many queue threads each way. Over
 * one, after a backlog of 2,000 appointments the feed ran 5 s behind the last event applied (the adapter commits
 * each message before its AA, one at a time per connection); over 8, 0.5 s.
 */
const HL7_NOTIFY_CONNECTIONS = process.env.BENCH_HL7_NOTIFY_CONNECTIONS ?? '8';
const ADMIN_TOKEN = 'bench-emr-latency-admin-0001';
const DOCTORS = 10;
const LOCATIONS = 3;
/** Simulator calls at once while the clinic and the backlog are booked (untimed). */
const BOOKING_CONCURRENCY = 4;
/** Webhooks in flight at once when this process sends the backlog. */
const DELIVERY_CONCURRENCY = 16;
/** The simulator pauses a subscription after this many failed deliveries in a row (CONTRACT section 3). */
export const PAUSE_AFTER = 50;

export type EmrKind = 'fhir' | 'hl7';

export interface StackOptions {
  emr: EmrKind;
  /** Flags for `emr-bridge fhir-server` (`--no-transactions`). */
  fhirServerFlags?: string[];
  /** EMR_MAX_CONCURRENCY given to the adapter. */
  maxConcurrency: number;
  /** More settings for the adapter (HL7_SEND_CONNECTIONS). */
  settings?: Record<string, string>;
  /** The FHIR EMR is the bundled server's vendor profile, booked into by Slot (./vendor-bench.ts). */
  vendor?: boolean;
}

/** The service ids the simulator made: the clinic's, then the backlog's. */
export interface Entities {
  doctors: string[];
  locations: string[];
  /** Every patient (known before the outage, and new in the backlog). */
  patients: string[];
  /** Every appointment (the clinic's first ten, and the backlog's). */
  appointments: string[];
}

export interface Backlog {
  /** Webhook events the backlog sends: one per appointment, one more per new patient. */
  events: number;
  /** The adapter's last inbox id before the backlog: its events are the rows after it. */
  afterInboxId: number;
  /** The events as the simulator made them (patient.created before its appointment.created), with eventIds of their own. */
  bodies: Record<string, unknown>[];
}

/** Who sends the backlog: the simulator (a resume of the paused subscription) or this process. */
export type Sender = 'simulator' | 'bench';

export interface MappingState {
  pending: number;
  done: number;
  expected: number;
  /** Epoch ms. */
  lastSentAt: number | undefined;
}

export interface LatencyStack {
  emr: EmrKind;
  /** The vendor run's master data, roster and Slots. */
  vendor?: VendorBench;
  /** The EMR itself, not through the proxy: the FHIR base, or the HL7 EMR's control API. */
  emrUrl: string;
  simUrl: string;
  proxy: LatencyProxy;
  entities: Entities;
  subscriptionId: string;
  adapterUrl(): string;
  /** The adapter's database, read-only (reopened for each adapter process). */
  db(): Database.Database;
  /** The mapping outbox: mappings waiting, those done (sent or given up) of the kinds the EMR names back, how many there will be, when the last was sent. */
  mappings(): MappingState;
  /** Books the clinic (DOCTORS doctors, LOCATIONS locations, `patients` known patients) and waits until the adapter has mapped all of it. */
  seed(patients: number): Promise<void>;
  /** Stops the adapter, books `appointments` (every other one with a new patient), waits for the pause, starts the adapter again. */
  outage(appointments: number): Promise<Backlog>;
  /**
   * The EMR calls the adapter says it may have in flight at most (/admin/status): EMR_MAX_CONCURRENCY (FHIR), its MLLP
   * links (HL7 v2, each one message at a time); undefined when it does not say.
   */
  emrConcurrency(): Promise<number | undefined>;
  /**
   * Starts a planned EMR downtime through the adapter's admin API (until an hour from now), or ends it: the adapter
   * takes in what arrives meanwhile and calls the EMR again only once it has ended.
   */
  downtime(action: 'start' | 'end'): Promise<void>;
  /** Sends the backlog; resolves once the simulator has been told to resume, or once this process has sent every event. */
  deliver(backlog: Backlog, by: Sender): Promise<void>;
  /** CPU seconds each process of the stack has used so far (the adapter's current process). */
  cpu(): { serve: number; emr: number; simulator: number };
  close(): Promise<void>;
}

/** Runs `work` over `items`, `n` at a time. */
export async function inParallel<T, R>(items: T[], n: number, work: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i]!, i);
      }
    }),
  );
  return out;
}

/** Stops a child; one that does not stop within 10 s is killed. */
async function stopChild(child: Child): Promise<void> {
  const killer = setTimeout(() => child.proc.kill('SIGKILL'), 10_000);
  await child.stop();
  clearTimeout(killer);
}

/** Every child this process has running and its temp folders: killed and removed at once should the benchmark be stopped by a signal. */
const running = new Set<Child>();
const folders = new Set<string>();
function cleanUpOnSignal(): () => void {
  const handler = (signal: NodeJS.Signals) => {
    for (const child of running) child.proc.kill('SIGKILL');
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

type Closers = (() => Promise<unknown>)[];

async function started(child: Promise<Child>, closers: Closers): Promise<Child> {
  const c = await child;
  running.add(c);
  closers.push(async () => {
    await stopChild(c);
    running.delete(c);
  });
  return c;
}

async function startEmr(opts: StackOptions, notify: string, closers: Closers, vendor?: VendorBench): Promise<{ emrUrl: string; target: string; pid: number }> {
  if (vendor) {
    const emr = await started(
      startChild(['bin/run-ts.js', 'bench/support/bundled-emr-process.ts', 'fhir-vendor', vendor.masterDataFile], { timeoutMs: 60_000 }),
      closers,
    );
    return { emrUrl: emr.url, target: emr.url, pid: emr.proc.pid! };
  }
  if (opts.emr === 'hl7') {
    const emr = await started(startChild(['bin/run-ts.js', 'bench/support/bundled-emr-process.ts', 'hl7', notify, HL7_NOTIFY_CONNECTIONS]), closers);
    const mllp = /^mllp on (mllp:\/\/\S+)$/m.exec(emr.output())?.[1];
    if (!mllp) throw new Error(`the HL7 EMR named no MLLP address:\n${emr.output()}`);
    return { emrUrl: emr.url, target: mllp, pid: emr.proc.pid! };
  }
  const args = ['bin/emr-bridge.js', 'fhir-server', '--port', '0', ...(opts.fhirServerFlags ?? [])];
  const emr = await started(startChild(args, { env: { LOG_LEVEL } }), closers);
  return { emrUrl: emr.url, target: emr.url, pid: emr.proc.pid! };
}

/** The adapter's settings: the service directly, the EMR through the proxy. */
function adapterEnv(opts: StackOptions, dir: string, ports: { http: number; mllp: number }, service: Record<string, string>, proxyUrl: string) {
  const emr: Record<string, string> =
    opts.emr === 'fhir'
      ? { FHIR_BASE_URL: proxyUrl, FHIR_AUTH: 'none' }
      : { EMR_PROTOCOL: 'hl7v2', HL7_SEND_URL: proxyUrl, HL7_LISTEN_HOST: '127.0.0.1', HL7_LISTEN_PORT: String(ports.mllp) };
  return {
    LOG_LEVEL,
    PORT: String(ports.http),
    HOST: '127.0.0.1',
    DATA_DIR: join(dir, 'adapter'),
    ADMIN_TOKEN,
    EMR_MAX_CONCURRENCY: String(opts.maxConcurrency),
    ...service,
    ...emr,
    ...opts.settings,
  };
}

/** Entity kinds the EMR names back, so the adapter posts their mappings: an HL7 EMR never names doctors and locations. */
export const mappedKinds = (emr: EmrKind): string[] => (emr === 'fhir' ? ['doctor', 'location', 'patient', 'appointment'] : ['patient', 'appointment']);

/** Node's own options for `serve` (BENCH_EMR_SERVE_NODE_ARGS, space-separated: `--cpu-prof --cpu-prof-dir=/tmp/prof` profiles it). */
const SERVE_NODE_ARGS = (process.env.BENCH_EMR_SERVE_NODE_ARGS ?? '').split(' ').filter(Boolean);

/** `emr-bridge serve`, stopped and started again around the outage, and a read-only connection to its database. */
function adapterProcess(env: Record<string, string>, dir: string, closers: Closers) {
  let child: Child | undefined;
  let db: Database.Database | undefined;
  const closeDb = () => {
    db?.close();
    db = undefined;
  };
  closers.push(async () => closeDb());
  return {
    url: () => child!.url,
    pid: () => child!.proc.pid!,
    async start(): Promise<void> {
      child = await started(startChild([...SERVE_NODE_ARGS, 'bin/emr-bridge.js', 'serve'], { env, timeoutMs: 60_000 }), closers);
    },
    async stop(): Promise<void> {
      closeDb();
      if (!child) return;
      await stopChild(child);
      running.delete(child);
    },
    db(): Database.Database {
      db ??= new Database(join(dir, 'adapter', 'emr-bridge.db'), { readonly: true, fileMustExist: true });
      return db;
    },
  };
}

/** The mapping outbox against the entities made so far. */
function readMappings(db: Database.Database, emr: EmrKind, entities: Entities): MappingState {
  const kinds = mappedKinds(emr);
  const row = db
    .prepare(
      `SELECT sum(state = 'pending') AS pending, sum(state <> 'pending' AND entity_type IN (${kinds.map(() => '?').join(',')})) AS done,
        max(CASE WHEN state = 'sent' THEN updated_at END) AS lastSentAt FROM mapping_outbox`,
    )
    .get(...kinds) as { pending: number | null; done: number | null; lastSentAt: number | null };
  const expected = (emr === 'fhir' ? entities.doctors.length + entities.locations.length : 0) + entities.patients.length + entities.appointments.length;
  return { pending: row.pending ?? 0, done: row.done ?? 0, expected, lastSentAt: row.lastSentAt ?? undefined };
}

export async function startLatencyStack(opts: StackOptions): Promise<LatencyStack> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-bench-emr-latency-'));
  folders.add(dir);
  const forgetSignals = cleanUpOnSignal();
  const closers: Closers = [
    async () => {
      rmSync(dir, { recursive: true, force: true });
      folders.delete(dir);
      forgetSignals();
    },
  ];
  const close = async () => {
    for (const c of closers.splice(0).reverse()) await c().catch(() => undefined);
  };
  try {
    const sim = await started(startChild(['bin/emr-bridge.js', 'simulator', '--port', '0'], { env: { LOG_LEVEL, SIMULATOR_DATABASE_PATH: '' } }), closers);
    const ports = { http: await freePort(), mllp: await freePort() };
    const simPost = async <T>(path: string, body: unknown = {}) => {
      const res = await requestJson<T>('POST', `${sim.url}${path}`, body);
      if (res.status >= 300) throw new Error(`simulator ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const vendor = opts.vendor ? writeVendorBench(dir, DOCTORS, LOCATIONS, Date.now()) : undefined;
    const { clinicId } = await simPost<{ clinicId: string }>(
      '/_sim/clinics',
      vendor?.clinic ?? { timeZone: 'UTC', quietHours: { start: '00:00', end: '00:00' } },
    );
    const { key } = await simPost<{ key: string }>('/_sim/keys', { clinicId, mode: 'live' });
    const sub = await simPost<{ id: string; keyId: string; signingSecret: string }>('/_sim/subscriptions', {
      clinicId,
      url: `http://127.0.0.1:${ports.http}/webhooks/service`,
    });
    const emr = await startEmr(opts, `mllp://127.0.0.1:${ports.mllp}`, closers, vendor);
    const proxy = opts.emr === 'fhir' ? await startHttpLatencyProxy(emr.target, { delayMs: 0 }) : await startMllpLatencyProxy(emr.target, { delayMs: 0 });
    closers.push(() => proxy.close());
    const service = { SERVICE_BASE_URL: sim.url, SERVICE_API_KEY: key, SERVICE_KEY_ID: sub.keyId, SERVICE_SIGNING_SECRETS: sub.signingSecret };
    const env = adapterEnv(opts, dir, ports, service, proxy.url);

    const adapter = adapterProcess(env, dir, closers);
    await adapter.start();

    const entities: Entities = { doctors: [], locations: [], patients: [], appointments: [] };
    const queued = async () => (await requestJson<{ paused: boolean; queued: number }>('GET', `${sim.url}/_sim/subscriptions/${sub.id}`)).body;
    type Booked = { serviceId: string; doctor: { serviceId: string }; location: { serviceId: string }; patient: { serviceId: string } } & Record<
      string,
      unknown
    >;
    const book = (body: Record<string, unknown>) => simPost<Booked>('/_sim/appointments', { clinicId, ...body });
    const mappings = () => readMappings(adapter.db(), opts.emr, entities);
    /** Every entity made so far mapped and posted back. */
    const allMapped = () => {
      const m = mappings();
      return m.pending === 0 && m.done >= m.expected;
    };

    /** The vendor run's crosswalk, imported as an operator would before go-live. */
    const importRoster = async (v: VendorBench) => {
      const res = await request(`${adapter.url()}/admin/crosswalk/import`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'text/csv' },
        body: v.crosswalkCsv,
      });
      const text = await res.body.text();
      if (res.statusCode !== 200 || (JSON.parse(text) as { refused: unknown[] }).refused.length)
        throw new Error(`the roster's import: ${res.statusCode} ${text}`);
    };
    /** Where the vendor run's i-th booking of a doctor starts: that doctor's next free Slot. */
    const slotOf = (doctor: number): Record<string, string> => (vendor ? { startsAt: vendor.nextSlot(doctor) } : {});

    return {
      emr: opts.emr,
      ...(vendor ? { vendor } : {}),
      emrUrl: emr.emrUrl,
      simUrl: sim.url,
      proxy,
      entities,
      subscriptionId: sub.id,
      adapterUrl: adapter.url,
      db: adapter.db,
      cpu: () => ({ serve: cpuSeconds(adapter.pid()), emr: cpuSeconds(emr.pid), simulator: cpuSeconds(sim.proc.pid!) }),
      mappings,
      async seed(patients) {
        // The vendor EMR's doctors and rooms are its own: the roster is mapped before anything names it.
        if (vendor) {
          await importRoster(vendor);
          entities.doctors.push(...vendor.doctors);
          entities.locations.push(...vendor.locations);
        }
        // The clinic's first appointments make its doctors and locations (and a patient each), one at a time so
        // that the locations are shared; the vendor run's name the roster's.
        for (let i = 0; i < DOCTORS; i++) {
          const made = await book({
            doctor: vendor ? { serviceId: vendor.doctors[i] } : { name: `Dr Bench ${i}` },
            location: vendor
              ? { serviceId: vendor.locations[i % LOCATIONS] }
              : i < LOCATIONS
                ? { name: `Room ${i}` }
                : { serviceId: entities.locations[i % LOCATIONS] },
            ...slotOf(i),
          });
          if (!vendor) entities.doctors.push(made.doctor.serviceId);
          if (!vendor && i < LOCATIONS) entities.locations.push(made.location.serviceId);
          entities.patients.push(made.patient.serviceId);
          entities.appointments.push(made.serviceId);
        }
        const more = Array.from({ length: Math.max(0, patients - DOCTORS) }, (_, i) => i);
        const made = await inParallel(more, BOOKING_CONCURRENCY, () => simPost<{ serviceId: string }>('/_sim/patients', { clinicId }));
        entities.patients.push(...made.map((p) => p.serviceId));
        await waitUntil('the clinic mapped', async () => (await queued()).queued === 0 && allMapped());
      },
      async outage(appointments) {
        const afterInboxId = adapter.db().prepare('SELECT coalesce(max(id), 0) FROM inbox_events').pluck().get() as number;
        await adapter.stop();
        const known = entities.patients.slice();
        const made = await inParallel(
          Array.from({ length: appointments }, (_, i) => i),
          BOOKING_CONCURRENCY,
          (i) =>
            book({
              doctor: { serviceId: entities.doctors[i % DOCTORS] },
              location: { serviceId: entities.locations[i % LOCATIONS] },
              // Every other appointment is a new patient's (made with it: patient.created, then appointment.created).
              ...(i % 2 === 1 ? { patient: { serviceId: known[((i - 1) / 2) % known.length] } } : {}),
              // Taken in order of booking: concurrent bookings each hold a Slot of their own.
              ...slotOf(i % DOCTORS),
            }),
        );
        const bodies: Record<string, unknown>[] = [];
        for (const [i, m] of made.entries()) {
          entities.appointments.push(m.serviceId);
          if (i % 2 === 0) entities.patients.push(m.patient.serviceId);
          bodies.push(...eventsOf(clinicId, m, i % 2 === 0));
        }
        // The vendor run's changes come after every booking (later in time), so none overtakes its booking.
        if (vendor)
          bodies.push(
            ...(await vendorChanges(
              made,
              (path, body) => simPost(path, body),
              (i) => slotOf(i % DOCTORS),
              clinicId,
            )),
          );
        const events = bodies.length;
        await waitUntil('the subscription paused with the backlog queued', async () => {
          const s = await queued();
          return s.paused && s.queued === events;
        });
        await adapter.start();
        return { events, afterInboxId, bodies };
      },
      async emrConcurrency() {
        type Status = { emrCalls?: { max: number }; emrLinks?: { configured: number } };
        const { body } = await requestJson<Status>('GET', `${adapter.url()}/admin/status`, undefined, { authorization: `Bearer ${ADMIN_TOKEN}` });
        return opts.emr === 'fhir' ? body.emrCalls?.max : body.emrLinks?.configured;
      },
      async downtime(action) {
        const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
        const { status, body } =
          action === 'start'
            ? await requestJson(
                'POST',
                `${adapter.url()}/admin/emr/downtime`,
                { until: new Date(Date.now() + 3_600_000).toISOString(), reason: 'benchmark' },
                admin,
              )
            : await requestJson('DELETE', `${adapter.url()}/admin/emr/downtime`, undefined, admin);
        if (status !== 200) throw new Error(`the adapter's downtime (${action}): ${status} ${JSON.stringify(body)}`);
      },
      async deliver(backlog, by) {
        if (by === 'simulator') await simPost(`/_sim/subscriptions/${sub.id}/resume`);
        else await postSigned(adapter.url(), { keyId: sub.keyId, secret: sub.signingSecret }, backlog.bodies);
      },
      async close() {
        await adapter.stop();
        await close();
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * The events the simulator made for a booking, as it sends them: the new patient's patient.created first, then the
 * appointment.created of the snapshot it answered.
 */
function eventsOf(clinicId: string, booked: Record<string, unknown>, newPatient: boolean): Record<string, unknown>[] {
  const { serviceId: _, ...snapshot } = booked;
  const envelope = (eventType: string) => ({ eventId: randomUUID(), eventType, occurredAt: new Date().toISOString(), clinicId });
  return [...(newPatient ? [{ ...envelope('patient.created'), patient: snapshot.patient }] : []), { ...envelope('appointment.created'), ...snapshot }];
}

/** Posts each body as a signed webhook, DELIVERY_CONCURRENCY at a time; throws unless every one is acknowledged. */
async function postSigned(adapterUrl: string, key: { keyId: string; secret: string }, bodies: Record<string, unknown>[]): Promise<void> {
  const payloads = bodies.map((b) => Buffer.from(JSON.stringify(b)));
  const result = await runLoad({
    url: adapterUrl,
    path: '/webhooks/service',
    concurrency: DELIVERY_CONCURRENCY,
    requests: bodies.length,
    maxSeconds: 300,
    build: (i) => ({
      body: payloads[i]!,
      headers: signedWebhookHeaders({
        keyId: key.keyId,
        secrets: [key.secret],
        timestamp: Math.floor(Date.now() / 1000),
        body: payloads[i]!,
        eventId: String(bodies[i]!.eventId),
        eventType: String(bodies[i]!.eventType),
        attempt: 1,
      }),
    }),
  });
  if (result.ok !== bodies.length) throw new Error(`the backlog's webhooks: ${result.ok} of ${bodies.length} acknowledged, ${result.errors} refused or failed`);
}

/** Waits until `done()` holds, looking every 100 ms; gives up after `timeoutMs`. */
export async function waitUntil(what: string, done: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await done())) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(100);
  }
}
