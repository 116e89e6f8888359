// HL7 v2 benchmark (EMR_PROTOCOL=hl7v2, CONTRACT section 6): the adapter (`emr-bridge serve`), the bundled HL7
// EMR (./support/hl7-emr-process.ts) and the simulator, each a process of its own (./support/hl7-bench-stack.ts).
//
// 1. Appointments from webhook to AA: N new appointments (each a new patient), made on the simulator first
//    (untimed), their appointment.created webhooks signed here and posted straight to the adapter; timed until
//    the EMR holds every appointment, i.e. has acknowledged every S12 (and the A28 before it). The adapter sends
//    2 messages per appointment, so its rate is acknowledged messages/s (2N / seconds). Baseline, in the same
//    run: a bare MLLP client, @medplum/hl7's Hl7Client.sendAndWait, sending the same number of messages (the
//    A28s and S12s the adapter would send, built by its own builders) one at a time over one connection, as the
//    adapter sends, to the same bundled HL7 EMR (a process of its own without a notify target: it applies and
//    acknowledges the same way, and sends no feeds back to nobody). The project's own MLLP client
//    (createMllpClient) on the same line is shown beside it. Target: adapter >= 0.7 of the Hl7Client's rate.
// 2. Documents from MDM to the service: the EMR files K small PDFs as MDM^T02 to the adapter's listener; timed
//    until every one is SENT (or HELD) as the service answered (the adapter's outbox, read from its SQLite file).
//    Informational.
// 3. Memory over many 1 MB documents: MDM^T02 with a 1 MB PDF each (four distinct PDFs, made once), through
//    the listener, the outbox and on to the simulator (whose SQLite is a file in a temp folder), filed as the
//    adapter takes them (at most WINDOW not yet SENT). 100 first (the warm-up) to measure the rate; then as many
//    of 10,000 as fit in about 4 minutes (BENCH_HL7_BIG_SECONDS). The adapter's RSS (VmRSS of its process) is
//    read every 2.5 % of the run. Target: RSS at the end <= 1.5 x RSS at 10 %.
//
// Parts 1 and 2 run BENCH_ROUNDS times (3 by default), the adapter and the baselines in alternating order, each
// adapter round on a fresh system; the table gives medians and the median of the rounds' ratios. The EMR sends its
// feeds and documents over BENCH_HL7_NOTIFY_CONNECTIONS connections (1 by default; `--notify-connections`).
import { Hl7Client } from '@medplum/hl7';
import type { Hl7Message } from '@medplum/core';
import { systemClock } from '../src/clock.ts';
import { buildPatientMessage } from '../src/emr/hl7v2/messages/adt.ts';
import type { HeaderContext } from '../src/emr/hl7v2/messages/header.ts';
import { buildAppointmentMessage } from '../src/emr/hl7v2/messages/siu.ts';
import { createMllpClient } from '../src/emr/hl7v2/mllp/client.ts';
import { parseMllpUrl } from '../src/emr/hl7v2/mllp/endpoint.ts';
import { controlIdFor } from '../src/emr/hl7v2/outbound.ts';
import { appointmentEvent } from './support/events.ts';
import { cpuSeconds, type EmrChild, type Hl7BenchStack, rssMiB, sleep, startEmrChild, startHl7BenchStack } from './support/hl7-bench-stack.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const APPOINTMENTS = Number(process.env.BENCH_HL7_APPOINTMENTS ?? 300);
/** Before each timed run (the adapter's first hundreds of commits grow its WAL file; the JIT warms up). */
const WARM_APPOINTMENTS = 100;
const DOCUMENTS = Number(process.env.BENCH_HL7_DOCUMENTS ?? 200);
const WARM_DOCUMENTS = 20;
const SMALL_PDF_BYTES = 2 * 1024;
const BIG_PDF_BYTES = 1024 * 1024;
const BIG_DOCUMENTS = Number(process.env.BENCH_HL7_BIG_DOCUMENTS ?? 10_000);
const BIG_PROBE = 100;
/** Wall-clock budget for the 1 MB documents after the probe. */
const BIG_BUDGET_S = Number(process.env.BENCH_HL7_BIG_SECONDS ?? 240);
/** Documents filed and not yet SENT (or HELD), at most: the EMR's queue and the outbox stay small. */
const WINDOW = 16;
const STALL_MS = 30_000;

const ECHO_TARGET = 0.7;
const RSS_TARGET = 1.5;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const range = (xs: number[], digits = 0) => `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;

/** Polls `value` until it reaches `target`; throws when it has not moved for STALL_MS. */
async function waitFor(what: string, value: () => Promise<number>, target: number, everyMs = 20): Promise<void> {
  let last = -1;
  let movedAt = performance.now();
  for (;;) {
    const now = await value();
    if (now >= target) return;
    if (now !== last) movedAt = performance.now();
    else if (performance.now() - movedAt > STALL_MS) throw new Error(`${what}: ${now} of ${target}, none for ${STALL_MS / 1000} s`);
    last = now;
    await sleep(everyMs);
  }
}

// ---- baselines: a bare MLLP client, one message in flight, over one connection -----------------------------

/** The A28 and S12 the adapter sends for a new appointment with a new patient, built by its own builders. */
function adapterMessages(tag: string, appointments: number): Hl7Message[] {
  const header = (purpose: string): HeaderContext => ({
    sendingApplication: 'EMR-BRIDGE',
    sendingFacility: 'SERVICE',
    receivingApplication: 'EMR',
    receivingFacility: 'HOSPITAL',
    assigningAuthority: 'SERVICE',
    controlId: controlIdFor(purpose),
    now: Date.now(),
  });
  const messages: Hl7Message[] = [];
  for (let i = 0; i < appointments; i++) {
    const e = appointmentEvent({ appointmentId: `${tag}_apt_${i}` }) as Record<string, Record<string, unknown>>;
    const a = e.appointment!;
    const patient = { serviceId: String(e.patient!.serviceId), name: String(e.patient!.name), phone: String(e.patient!.phone) };
    messages.push(buildPatientMessage(header(`new-patient:${patient.serviceId}`), { trigger: 'A28', patient }).message);
    messages.push(
      buildAppointmentMessage(header(`new-appointment:${a.serviceId}`), {
        trigger: 'S12',
        appointment: {
          serviceId: String(a.serviceId),
          status: String(a.status),
          startsAt: String(a.startsAt),
          startsAtLocal: String(a.startsAtLocal),
          notes: String(a.notes),
        },
        patient,
        doctor: { serviceId: String(e.doctor!.serviceId), name: String(e.doctor!.name) },
        location: { serviceId: String(e.location!.serviceId), name: String(e.location!.name) },
      }).message,
    );
  }
  return messages;
}

type Send = (m: Hl7Message) => Promise<Hl7Message>;

/** Messages/s: `messages` sent one at a time, each waiting for its AA. */
async function sendAll(send: Send, messages: Hl7Message[]): Promise<number> {
  const t0 = performance.now();
  for (const m of messages) {
    const ack = await send(m);
    const code = ack.getSegment('MSA')?.getField(1)?.toString();
    if (code !== 'AA') throw new Error(`echo baseline: answered ${code}`);
  }
  return messages.length / ((performance.now() - t0) / 1000);
}

interface EchoRound {
  hl7Client: number;
  mllpClient: number;
  messageBytes: number;
}

async function echoRound(emr: EmrChild, round: number): Promise<EchoRound> {
  const { host, port } = parseMllpUrl(emr.url);
  const medplum = new Hl7Client({ host, port });
  const ours = createMllpClient({ url: emr.url, ackTimeoutMs: 10_000, clock: systemClock });
  const clients: Record<'hl7Client' | 'mllpClient', Send> = {
    hl7Client: (m) => medplum.sendAndWait(m),
    mllpClient: (m) => ours.send(m),
  };
  try {
    const rates: Partial<Record<keyof typeof clients, number>> = {};
    let bytes = 0;
    for (const name of round % 2 === 0 ? (['hl7Client', 'mllpClient'] as const) : (['mllpClient', 'hl7Client'] as const)) {
      await sendAll(clients[name], adapterMessages(`warm_${name}_${round}`, WARM_APPOINTMENTS));
      const messages = adapterMessages(`echo_${name}_${round}`, APPOINTMENTS);
      bytes = messages.reduce((n, m) => n + Buffer.byteLength(m.toString()), 0) / messages.length;
      rates[name] = await sendAll(clients[name], messages);
    }
    return { hl7Client: rates.hl7Client!, mllpClient: rates.mllpClient!, messageBytes: bytes };
  } finally {
    await medplum.close();
    await ours.close();
  }
}

// ---- the adapter ---------------------------------------------------------------------------------------------

interface AdapterRound {
  /** Acknowledged A28 + S12 per second. */
  messagesPerSecond: number;
  appointmentsPerSecond: number;
  /** Adapter CPU per appointment, ms. */
  cpuMsPerAppointment: number;
  documentsPerSecond: number;
  cpuMsPerDocument: number;
}

const finalDocuments = async (stack: Hl7BenchStack) => {
  const o = stack.outbox();
  return (o.SENT ?? 0) + (o.HELD ?? 0);
};

async function adapterRound(round: number): Promise<AdapterRound> {
  const stack = await startHl7BenchStack();
  try {
    const pid = stack.adapter.proc.pid!;
    const appointments = async () => (await stack.emr.counts()).appointments;
    // Warm-up: connections, JIT, the database file.
    const warm = await stack.bookAppointments(WARM_APPOINTMENTS);
    await stack.postWebhooks(warm);
    await waitFor('warm-up appointments in the EMR', appointments, WARM_APPOINTMENTS);
    await waitFor('warm-up notifications', async () => -(await stack.emr.counts()).pending, 0);
    await sleep(500);

    // 1. N appointments, webhook to AA.
    const bodies = await stack.bookAppointments(APPOINTMENTS);
    const cpu0 = cpuSeconds(pid);
    const t0 = performance.now();
    const posted = stack.postWebhooks(bodies);
    await waitFor('appointments in the EMR', appointments, WARM_APPOINTMENTS + APPOINTMENTS);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds(pid) - cpu0;
    await posted;
    await waitFor('notifications', async () => -(await stack.emr.counts()).pending, 0);
    await sleep(500);

    // 2. K small documents, MDM^T02 to SENT.
    const patient = String((bodies[0]!.patient as { serviceId: string }).serviceId);
    const ids = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `DOC-${round}-${tag}-${i}`);
    await stack.emr.file(ids('warm', WARM_DOCUMENTS), patient, SMALL_PDF_BYTES, 4);
    await waitFor('warm-up documents', () => finalDocuments(stack), WARM_DOCUMENTS, 50);
    const dcpu0 = cpuSeconds(pid);
    const d0 = performance.now();
    await stack.emr.file(ids('timed', DOCUMENTS), patient, SMALL_PDF_BYTES, 4);
    await waitFor('documents SENT', () => finalDocuments(stack), WARM_DOCUMENTS + DOCUMENTS, 50);
    const dseconds = (performance.now() - d0) / 1000;
    const dcpu = cpuSeconds(pid) - dcpu0;
    return {
      messagesPerSecond: (2 * APPOINTMENTS) / seconds,
      appointmentsPerSecond: APPOINTMENTS / seconds,
      cpuMsPerAppointment: (cpu * 1000) / APPOINTMENTS,
      documentsPerSecond: DOCUMENTS / dseconds,
      cpuMsPerDocument: (dcpu * 1000) / DOCUMENTS,
    };
  } finally {
    await stack.close();
  }
}

// ---- 3. memory over many 1 MB documents -----------------------------------------------------------------------

/** One reading: documents done, the RSS (MiB) of the adapter, the EMR and the simulator, and their CPU seconds so far. */
type Sample = { done: number; adapter: number; emr: number; simulator: number; cpu: { adapter: number; simulator: number } };

interface MemoryRun {
  probeRate: number;
  planned: number;
  done: number;
  seconds: number;
  /** Every `planned / SAMPLES` documents of the run after the probe. */
  samples: Sample[];
}

const SAMPLES = 40;

async function memoryRun(): Promise<MemoryRun> {
  const stack = await startHl7BenchStack({ simulatorDb: true });
  try {
    // The patient the documents name: known to the service, and to the EMR through the adapter's A28.
    const first = await stack.bookAppointments(1);
    await stack.postWebhooks(first);
    await waitFor('the patient in the EMR', async () => (await stack.emr.counts()).appointments, 1);
    const who = String((first[0]!.patient as { serviceId: string }).serviceId);
    const pids = [stack.adapter.proc.pid!, stack.emr.pid, stack.sim.proc.pid!] as const;
    const sample = (done: number): Sample => ({
      done,
      adapter: rssMiB(pids[0]),
      emr: rssMiB(pids[1]),
      simulator: rssMiB(pids[2]),
      cpu: { adapter: cpuSeconds(pids[0]), simulator: cpuSeconds(pids[2]) },
    });

    let filed = 0;
    /**
     * Files up to `total` documents, never more than WINDOW ahead of those SENT (or HELD), none after `deadline`;
     * returns how many were done once every one filed is. `onDone` hears the count as it grows.
     */
    const run = async (total: number, deadline: number, onDone: (done: number) => void): Promise<number> => {
      const base = await finalDocuments(stack);
      const start = filed;
      let done = 0;
      let movedAt = performance.now();
      for (;;) {
        const open = performance.now() < deadline;
        const want = Math.min(total, done + WINDOW);
        if (open && filed - start < want) {
          const n = want - (filed - start);
          await stack.emr.file(
            Array.from({ length: n }, (_, i) => `BIG-${filed + i}`),
            who,
            BIG_PDF_BYTES,
            4,
          );
          filed += n;
        }
        await sleep(50);
        const now = (await finalDocuments(stack)) - base;
        if (now !== done) movedAt = performance.now();
        else if (performance.now() - movedAt > STALL_MS) throw new Error(`1 MB documents: ${now} of ${total}, none for ${STALL_MS / 1000} s`);
        done = now;
        onDone(done);
        if (done >= total || (!open && done >= filed - start)) return done;
      }
    };

    const p0 = performance.now();
    await run(BIG_PROBE, Number.POSITIVE_INFINITY, () => undefined);
    const probeRate = BIG_PROBE / ((performance.now() - p0) / 1000);
    const planned = Math.min(BIG_DOCUMENTS, Math.max(BIG_PROBE, Math.floor((probeRate * BIG_BUDGET_S) / 100) * 100));
    const step = planned / SAMPLES;
    const samples: Sample[] = [sample(0)];
    const t0 = performance.now();
    // Should the rate fall below the probe's, nothing more is filed once the budget is spent; the table says how
    // many were done.
    const done = await run(planned, t0 + BIG_BUDGET_S * 1000, (d) => {
      if (d >= samples.length * step) samples.push(sample(d));
    });
    const seconds = (performance.now() - t0) / 1000;
    if (samples.at(-1)?.done !== done) samples.push(sample(done));
    return { probeRate, planned, done, seconds, samples };
  } finally {
    await stack.close();
  }
}

// ---- the table -------------------------------------------------------------------------------------------------

export async function benchHl7(): Promise<{ rows: Record<string, string | number>[]; ok: boolean }> {
  const echo: EchoRound[] = [];
  const adapter: AdapterRound[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['echo', 'adapter'] as const) : (['adapter', 'echo'] as const);
    for (const part of order) {
      if (part === 'adapter') adapter.push(await adapterRound(round));
      else {
        const emr = await startEmrChild();
        try {
          echo.push(await echoRound(emr, round));
        } finally {
          await emr.stop();
        }
      }
    }
  }
  const memory = await memoryRun();

  const ratios = adapter.map((a, i) => a.messagesPerSecond / echo[i]!.hl7Client);
  const echoOk = median(ratios) >= ECHO_TARGET;
  /** The reading nearest to `fraction` of the documents done. */
  const at = (fraction: number) =>
    memory.samples.reduce((best, x) => (Math.abs(x.done - fraction * memory.done) < Math.abs(best.done - fraction * memory.done) ? x : best));
  const [s0, s10, s50, s90, s100] = [memory.samples[0]!, at(0.1), at(0.5), at(0.9), memory.samples.at(-1)!];
  /** CPU ms per document of a process between two readings. */
  const cpuPerDoc = (who: 'adapter' | 'simulator', a: Sample, b: Sample) => (((b.cpu[who] - a.cpu[who]) * 1000) / Math.max(1, b.done - a.done)).toFixed(0);
  const rssRatio = s100.adapter / s10.adapter;
  const afterWarmUp = memory.samples.filter((x) => x.done >= s10.done).map((x) => x.adapter);
  const rssOk = rssRatio <= RSS_TARGET;
  const row = (path: string, rate: string | number, runs: string, ratio: string, note: string) => ({
    path,
    'rate (median)': rate,
    'rate (runs)': runs,
    ratio,
    note,
  });
  const xs = (f: (r: AdapterRound) => number) => adapter.map(f);
  const capped = memory.done < BIG_DOCUMENTS;
  return {
    ok: echoOk && rssOk,
    rows: [
      row(
        `1. bare Hl7Client.sendAndWait -> bundled HL7 EMR, one in flight (baseline), msgs/s`,
        Math.round(median(echo.map((e) => e.hl7Client))),
        range(echo.map((e) => e.hl7Client)),
        '',
        `${2 * APPOINTMENTS} msgs of ${Math.round(median(echo.map((e) => e.messageBytes)))} B (A28+S12)`,
      ),
      row(
        `1. createMllpClient (the adapter's client) -> same EMR, msgs/s`,
        Math.round(median(echo.map((e) => e.mllpClient))),
        range(echo.map((e) => e.mllpClient)),
        median(echo.map((e, i) => e.mllpClient / echo[i]!.hl7Client)).toFixed(2),
        'ratio to the baseline',
      ),
      row(
        `1. adapter: webhook -> A28+S12 acknowledged AA, msgs/s`,
        Math.round(median(xs((a) => a.messagesPerSecond))),
        range(xs((a) => a.messagesPerSecond)),
        median(ratios).toFixed(2),
        `${Math.round(median(xs((a) => a.appointmentsPerSecond)))} appointments/s; adapter CPU ${median(xs((a) => a.cpuMsPerAppointment)).toFixed(1)} ms/appointment`,
      ),
      row(
        `1. target: adapter >= ${ECHO_TARGET} x baseline msgs/s: ${echoOk ? 'PASS' : 'FAIL'}`,
        '',
        `ratios ${range(ratios, 2)}`,
        median(ratios).toFixed(2),
        '',
      ),
      row(
        `2. documents: MDM^T02 (${SMALL_PDF_BYTES / 1024} KB PDF) -> listener -> outbox -> SENT, docs/s`,
        Math.round(median(xs((a) => a.documentsPerSecond))),
        range(xs((a) => a.documentsPerSecond)),
        '',
        `${DOCUMENTS} documents; adapter CPU ${median(xs((a) => a.cpuMsPerDocument)).toFixed(1)} ms/document; no target`,
      ),
      row(
        `3. 1 MB documents: ${memory.done} of ${BIG_DOCUMENTS}${capped ? ` (filed for ${BIG_BUDGET_S} s at most)` : ''}, docs/s`,
        (memory.done / memory.seconds).toFixed(1),
        `${memory.seconds.toFixed(0)} s`,
        '',
        `after a probe of ${BIG_PROBE} (warm-up) at ${memory.probeRate.toFixed(1)} docs/s`,
      ),
      row(
        '3. CPU ms per 1 MB document, first 10 % -> last 10 %',
        '',
        '',
        '',
        `adapter ${cpuPerDoc('adapter', s0, s10)} -> ${cpuPerDoc('adapter', s90, s100)}, simulator ${cpuPerDoc('simulator', s0, s10)} -> ${cpuPerDoc('simulator', s90, s100)}`,
      ),
      ...(
        [
          ['10 %', s10],
          ['50 %', s50],
          ['100 %', s100],
        ] as const
      ).map(([label, x]) =>
        row(
          `3. adapter RSS at ${label} (${x.done} documents), MiB`,
          x.adapter.toFixed(0),
          '',
          '',
          `EMR ${x.emr.toFixed(0)} MiB, simulator ${x.simulator.toFixed(0)} MiB`,
        ),
      ),
      row(
        `3. target: adapter RSS at 100 % <= ${RSS_TARGET} x at 10 %: ${rssOk ? 'PASS' : 'FAIL'}`,
        '',
        `from 10 %: ${range(afterWarmUp)} MiB`,
        rssRatio.toFixed(2),
        `${memory.samples.length - 1} readings of VmRSS`,
      ),
    ],
  };
}
