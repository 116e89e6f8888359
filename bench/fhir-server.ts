// Bundled FHIR server benchmark: does the embedded EMR slow down as it fills? The processor applies the
// processor benchmark's workload (2,000 appointment events over 200 appointments, created then rescheduled
// and so on, FHIR_AUTH none) against two bundled FHIR servers, each in its own process with a data file:
// (a) empty, (b) holding 100,000 records (50,000 Patients and 50,000 Appointments, each with its
// urn:emr-bridge:service identifier). (b) is filled the fast way: its data file is written here, 100,000
// JSON lines, and replayed by the server at start (the same path as a restart), not 100,000 HTTP calls.
// After one untimed run on each (JIT warm-up), the two alternate over a few rounds in the same run (each
// round's appointments new to both servers, so (a) ends a run holding about 2,000 records); the target is
// events/s on (b) >= 0.8 of (a). CPU per event (this process and the server's) is shown beside it: on a
// shared machine it moves less than throughput does.
// Below, one search at 100 and at 100,000 records, in-process through FhirRouter (no HTTP): the adapter's
// identifier search and its document scan (DocumentReference by status, type and _lastUpdated=ge<watermark>),
// on the server's indexed repository and on Medplum's MemoryRepository (the full scan it replaced).
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FhirRouter, MemoryRepository } from '@medplum/fhir-router';
import type { Bundle, Resource } from '@medplum/fhirtypes';
import { loadFhirDefinitions } from '../src/fhir-server/definitions.ts';
import { IndexedMemoryRepository } from '../src/fhir-server/indexed-repository.ts';
import { startChild, type Child } from './support/child.ts';
import { measure } from './processor.ts';
import { total, type Run } from './support/processor-workload.ts';
import { plainFhirEmr } from './support/fhir-emr.ts';

const SYSTEM = 'urn:emr-bridge:service';
const _APPOINTMENTS = 200;
const _EVENTS_PER = 10;
const _TYPES = ['appointment.created', 'appointment.rescheduled', 'appointment.payment_updated'];
const STORED = 100_000;
const ROUNDS = 4;
const _STALL_MS = 30_000;
const LOINC = 'http://loinc.org';
const DOC_TYPES = ['11502-2', '57833-6'];

/** Record i of a filled server: Patients and Appointments in turn, each with its service identifier. */
function filler(i: number): Resource {
  const n = i >> 1;
  if (i % 2 === 0)
    return {
      resourceType: 'Patient',
      id: `fill-pat-${n}`,
      identifier: [{ system: SYSTEM, value: `pat_fill_${n}` }],
      name: [{ text: `Filled Patient ${n}` }],
      telecom: [{ system: 'phone', value: `+3161${String(n).padStart(7, '0')}` }],
    };
  return {
    resourceType: 'Appointment',
    id: `fill-apt-${n}`,
    identifier: [{ system: SYSTEM, value: `fill_${n}` }],
    status: 'booked',
    start: '2026-02-01T09:00:00.000Z',
    end: '2026-02-01T09:30:00.000Z',
    participant: [{ actor: { reference: `Patient/fill-pat-${n}` }, status: 'accepted' }],
  };
}

function document(i: number): Resource {
  return {
    resourceType: 'DocumentReference',
    id: `fill-doc-${i}`,
    status: 'current',
    type: { coding: [{ system: LOINC, code: DOC_TYPES[i % 2]! }] },
    subject: { reference: `Patient/fill-pat-${i}` },
    content: [{ attachment: { contentType: 'application/pdf', url: `http://emr.invalid/doc/${i}` } }],
  };
}

async function writeDataFile(file: string, count: number): Promise<void> {
  const out = createWriteStream(file);
  for (let i = 0; i < count; i++) if (!out.write(`${JSON.stringify(filler(i))}\n`)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

/**
 * Milliseconds per FhirRouter search over `repo`, the median of `reps` (each a different record when `url`
 * uses k), after `warm` untimed searches (the first document scan of a type builds its index: timed apart).
 */
async function searchMs(
  repo: MemoryRepository,
  url: (k: number) => string,
  o: { reps: number; warm: number; found: number },
): Promise<{ ms: number; first: number }> {
  const router = new FhirRouter();
  const times: number[] = [];
  for (let k = -o.warm; k < o.reps; k++) {
    const t = performance.now();
    const [outcome, bundle] = await router.handleRequest(
      { method: 'GET', url: url(Math.max(k, 0)), pathname: '', query: {}, params: {}, body: undefined },
      repo,
    );
    times.push(performance.now() - t);
    const found = (bundle as Bundle | undefined)?.entry?.length ?? 0;
    if (found !== o.found) throw new Error(`${url(k)}: ${found} found, expected ${o.found} (${JSON.stringify(outcome)})`);
  }
  const first = times[0]!;
  const timed = times.slice(o.warm).sort((a, b) => a - b);
  return { ms: timed[timed.length >> 1]!, first };
}

interface SearchTimes {
  identifier: number;
  documents: number;
  /** The first document scan (an indexed repository builds its _lastUpdated index then). */
  firstDocuments: number;
}

/**
 * One repository filled with `records` (Patients and Appointments; for the document scan, as many
 * DocumentReferences, then 5 written after the watermark): the adapter's two searches timed on it.
 */
async function timeSearches(make: () => MemoryRepository, records: number, reps: { identifier: number; documents: number }): Promise<SearchTimes> {
  let repo = make();
  for (let i = 0; i < records; i++) await repo.createResource(filler(i));
  const patients = Math.ceil(records / 2);
  const n = reps.identifier;
  const identifier = await searchMs(
    repo,
    (k) => `Patient?identifier=${encodeURIComponent(`${SYSTEM}|pat_fill_${Math.floor(((k + 0.5) * patients) / n)}`)}&_count=1`,
    { reps: n, warm: n > 1 ? 1 : 0, found: 1 },
  );
  repo = make(); // the document scan looks at DocumentReferences only: a repository of them
  for (let i = 0; i < records; i++) await repo.createResource(document(i));
  await new Promise((r) => setTimeout(r, 2));
  const watermark = new Date().toISOString();
  for (let i = 0; i < 5; i++) await repo.createResource({ ...document(records + i), id: undefined } as Resource);
  const scan = `DocumentReference?status=current&type=${encodeURIComponent(DOC_TYPES.join(','))}&_lastUpdated=ge${encodeURIComponent(watermark)}&_sort=_lastUpdated&_count=100&_offset=0`;
  const documents = await searchMs(repo, () => scan, { reps: reps.documents, warm: reps.documents > 1 ? 1 : 0, found: 5 });
  return { identifier: identifier.ms, documents: documents.ms, firstDocuments: documents.first };
}

export async function benchFhirServer(): Promise<{ rows: Record<string, string | number>[]; ok: boolean }> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-bench-fhir-server-'));
  const env = { LOG_LEVEL: 'silent' };
  const children: Child[] = [];
  try {
    const emptyFile = join(dir, 'empty.jsonl');
    writeFileSync(emptyFile, '');
    const fullFile = join(dir, 'full.jsonl');
    await writeDataFile(fullFile, STORED);
    const empty = await startChild(['bin/emr-bridge.js', 'fhir-server', '--port', '0', '--data-file', emptyFile], { env });
    children.push(empty);
    const started = performance.now();
    const full = await startChild(['bin/emr-bridge.js', 'fhir-server', '--port', '0', '--data-file', fullFile], { env, timeoutMs: 300_000 });
    children.push(full);
    const replaySeconds = (performance.now() - started) / 1000;

    const servers = { empty, full };
    const run = async (which: 'empty' | 'full', name: string) => {
      const child = servers[which];
      const fhirEmr = plainFhirEmr(child.url, { identifierSystem: SYSTEM });
      try {
        return await measure(fhirEmr, dir, `${which}-${name}`, `${name}_`, child.proc.pid!);
      } finally {
        await fhirEmr.close();
      }
    };
    // One untimed run on each first, so that neither pays the JIT warm-up of this process or its own.
    await run('empty', 'warm');
    await run('full', 'warm');
    const runs: Record<'empty' | 'full', Run[]> = { empty: [], full: [] };
    for (let round = 0; round < ROUNDS; round++)
      for (const which of round % 2 === 0 ? (['empty', 'full'] as const) : (['full', 'empty'] as const)) runs[which].push(await run(which, `r${round}`));
    for (const child of children.splice(0)) await child.stop();

    loadFhirDefinitions();
    const indexed = {
      small: await timeSearches(() => new IndexedMemoryRepository(), 100, { identifier: 50, documents: 50 }),
      large: await timeSearches(() => new IndexedMemoryRepository(), STORED, { identifier: 50, documents: 50 }),
    };
    const scanned = {
      small: await timeSearches(() => new MemoryRepository(), 100, { identifier: 50, documents: 20 }),
      large: await timeSearches(() => new MemoryRepository(), STORED, { identifier: 3, documents: 1 }),
    };

    const a = total(runs.empty);
    const b = total(runs.full);
    const ratio = b.rate / a.rate;
    const roundRatios = runs.full.map((r, i) => r.rate / runs.empty[i]!.rate);
    const ok = ratio >= 0.8;
    const cpuPerEvent = (r: Run) => r.cpuUs / r.applied;
    const row = (run: string, r: Run) => ({
      run,
      events: r.applied,
      seconds: r.seconds.toFixed(2),
      'events applied/s': Math.round(r.rate),
      'CPU µs/event': Math.round(cpuPerEvent(r)),
    });
    const ms = (v: number) => (v < 1 ? v.toFixed(3) : v < 100 ? v.toFixed(1) : Math.round(v).toLocaleString('en-US'));
    const search = (run: string, small: number, large: number) => ({
      run,
      events: '',
      seconds: '',
      'events applied/s': `${ms(small)} ms | ${ms(large)} ms`,
      'CPU µs/event': `x${(large / small).toFixed(1)}`,
    });
    return {
      ok,
      rows: [
        row(`processor → bundled FHIR server, empty (${ROUNDS} runs)`, a),
        row(`processor → bundled FHIR server, ${STORED.toLocaleString('en-US')} records stored (${ROUNDS} runs)`, b),
        {
          run: `ratio stored/empty (target >= 0.8): ${ok ? 'PASS' : 'FAIL'}`,
          events: '',
          seconds: `runs ${Math.min(...roundRatios).toFixed(2)}–${Math.max(...roundRatios).toFixed(2)}`,
          'events applied/s': ratio.toFixed(3),
          'CPU µs/event': `CPU empty/stored ${(cpuPerEvent(a) / cpuPerEvent(b)).toFixed(2)}`,
        },
        {
          run: `start-up of the stored server (replays ${STORED.toLocaleString('en-US')} JSON lines)`,
          events: '',
          seconds: replaySeconds.toFixed(1),
          'events applied/s': '',
          'CPU µs/event': '',
        },
        { run: 'one search, in-process: at 100 | at 100,000 records', events: '', seconds: '', 'events applied/s': 'ms', 'CPU µs/event': 'growth' },
        search('identifier=<system>|<value>&_count=1, indexed', indexed.small.identifier, indexed.large.identifier),
        search("identifier=<system>|<value>&_count=1, Medplum's scan", scanned.small.identifier, scanned.large.identifier),
        search('document scan, _lastUpdated=ge<watermark> (5 new), indexed', indexed.small.documents, indexed.large.documents),
        search("document scan, _lastUpdated=ge<watermark> (5 new), Medplum's scan", scanned.small.documents, scanned.large.documents),
        search('document scan, indexed: the first one (builds the _lastUpdated index)', indexed.small.firstDocuments, indexed.large.firstDocuments),
      ],
    };
  } finally {
    for (const child of children) await child.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
