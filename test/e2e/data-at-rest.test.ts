// Patient data at rest, end to end on each engine (CONTRACT section 7, issue 24): the real simulator sends
// webhooks and the adapter files documents whose patient names, phone numbers, notes, labels and PDF bytes
// carry marker strings of this run; once the events are applied and the documents sent (and one more document
// waiting in the outbox while the service is down, so a request with its PDF is still stored), the raw bytes of
// everything the adapter wrote are scanned for the markers, in every form a value may be stored in (bytes, hex,
// base64: ../support/marker-scan.ts).
//
// - SQLite (its generated key, as in zero-configuration mode): the adapter's DATA_DIR (its database, WAL and
//   shared memory, lock, key file) while it runs and again after it stopped, and a copy made by
//   `emr-bridge backup` while it ran.
// - PostgreSQL (DATA_KEYS_PATH: a key file as `emr-bridge data-keys generate --out` writes it): every file of
//   the server's data folder after a CHECKPOINT (a server of this file's own, so its folder is known), and a
//   text dump of every table of the adapter's database (`SELECT t::text FROM <table> t`). That dump stands in
//   for pg_dump: the embedded server's binaries ship no pg_dump, and a pg_dump older than the server refuses to
//   dump it; one of the server's major version or newer, when found on PATH, is scanned as well. The text dump
//   also reads values PostgreSQL stored compressed (TOAST), which a raw scan of the folder could miss.
//
// Sealed (the default once there is a key): no marker anywhere, while the stored rows are there, sealed. The same
// run with DATA_ENCRYPTION=off finds them (name, phone and the PDF's bytes, in every scanned set): the scan works.
// Only the adapter's files are scanned: the bundled FHIR server's file (the EMR's) and the simulator (the
// service's) hold the same data by design, in folders of their own.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { writeKeyFile } from '../../src/sealing/key-source.ts';
import { generateKeyFile } from '../../src/sealing/keys.ts';
import { migratePostgres } from '../../src/storage/postgres/migrate.ts';
import { runCli } from '../support/cli.ts';
import { startEmbeddedPostgres, type PostgresServer } from '../support/embedded-postgres.ts';
import { emrPatient, labReportDocument } from '../support/fhir-builders.ts';
import {
  describeHits,
  filesUnder,
  type Hit,
  type Marker,
  type MarkerRole,
  markerScanner,
  pdfWithMarker,
  randomPhone,
  randomWord,
  rolesFound,
} from '../support/marker-scan.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';

const NO_QUIET_HOURS = { timeZone: 'UTC', quietHours: { start: '00:00', end: '00:00' } };
/** Every sealed value starts with these characters: the base64url of its header's start (docs/data-at-rest.md). */
const SEALED_HEAD = Buffer.from('{"alg":"dir","enc":"A256GCM","kid":"').toString('base64url');
/** What the control run must find in every scanned set. */
const MUST_FIND: MarkerRole[] = ['patient name', 'patient phone', 'PDF bytes'];

type Mode = 'sealed' | 'off';

interface PatientMarkers {
  name: string;
  phone: string;
  notes: string;
  doctor: string;
}
interface DocumentMarkers {
  name: string;
  phone: string;
  label: string;
  pdfMarker: string;
  pdf: Buffer;
}
interface RunMarkers {
  patients: PatientMarkers[];
  documents: [DocumentMarkers, DocumentMarkers, DocumentMarkers, DocumentMarkers];
  all: Marker[];
}

function makeMarkers(): RunMarkers {
  const patients = Array.from({ length: 3 }, () => ({ name: randomWord(), phone: randomPhone(), notes: randomWord(), doctor: randomWord() }));
  const doc = (): DocumentMarkers => {
    const pdfMarker = randomWord();
    return { name: randomWord(), phone: randomPhone(), label: randomWord(), pdfMarker, pdf: pdfWithMarker(pdfMarker) };
  };
  const documents: RunMarkers['documents'] = [doc(), doc(), doc(), doc()];
  const all: Marker[] = [
    ...patients.flatMap((p): Marker[] => [
      { role: 'patient name', value: p.name },
      { role: 'patient phone', value: p.phone },
      { role: 'appointment notes', value: p.notes },
      { role: 'doctor name', value: p.doctor },
    ]),
    ...documents.flatMap((d): Marker[] => [
      { role: 'patient name', value: d.name },
      { role: 'patient phone', value: d.phone },
      { role: 'document label', value: d.label },
      { role: 'PDF bytes', value: d.pdfMarker },
    ]),
  ];
  return { patients, documents, all };
}

type DocView = { document?: { status: string } };
const statusOf = async (s: Stack, externalId: string) => (await s.admin<DocView>('GET', `/documents/${externalId}`)).body.document?.status;
const until = (s: Stack, externalId: string, status: string) =>
  waitFor(async () => ((await statusOf(s, externalId)) === status ? status : undefined), 20_000, 100).catch((err: Error) => {
    throw new Error(`document ${externalId} not ${status}: ${err.message}`);
  });

type Delivery = { eventId: string; eventType: string; statusCode: number | null };

/** Every event the simulator delivered is applied (or discarded as stale), and no new one came for half a second. */
async function allEventsSettled(s: Stack): Promise<string[]> {
  let previous = '';
  let pending = '';
  return waitFor(
    async () => {
      const deliveries = (await s.simGet<Delivery[]>('/_sim/deliveries')).body;
      const ids = [...new Set(deliveries.map((d) => d.eventId))].sort();
      for (const id of ids) {
        const res = await s.admin<{ state?: string }>('GET', `/events/${id}`);
        if (res.status !== 200 || !['applied', 'discarded_stale'].includes(res.body.state ?? '')) {
          pending = `${id}: ${res.status} ${res.body.state ?? ''}`;
          previous = '';
          return undefined;
        }
      }
      const seen = ids.join(',');
      if (seen !== previous) {
        previous = seen;
        return undefined;
      }
      return ids;
    },
    30_000,
    500,
  ).catch((err: Error) => {
    throw new Error(`events not all applied: ${err.message} (last pending: ${pending})`);
  });
}

/**
 * The work: 3 appointments, each with a new patient (name, phone), a doctor and notes, sent as webhooks and
 * applied; a lab report through the admin API and one filed in the EMR (DocumentReference, the PDF inline), both
 * SENT; a prescription through the admin API, HELD for the clinic. Then, the service answering 503 to every
 * call, one more lab report: it waits in the outbox, retried, its request (the PDF with it) stored meanwhile.
 * Answers the number of events applied and the waiting document's externalId.
 */
async function work(s: Stack, m: RunMarkers): Promise<{ events: number; waiting: string }> {
  for (const p of m.patients) {
    const made = await s.simPost('/_sim/appointments', {
      clinicId: s.clinicId,
      notes: p.notes,
      patient: { name: p.name, phone: p.phone },
      doctor: { name: p.doctor },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
  }
  const [lab, fromEmr, held, waiting] = m.documents;
  const request = (documentType: 'lab_report' | 'prescription', d: DocumentMarkers) => ({
    documentType,
    externalId: `at-rest-${randomWord(10)}`,
    patientPhone: d.phone,
    patientName: d.name,
    label: d.label,
    file: { base64: d.pdf.toString('base64'), filename: 'report.pdf' },
  });
  const post = async (r: ReturnType<typeof request>) => {
    const res = await s.admin('POST', '/documents', r);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return r.externalId;
  };
  const labId = await post(request('lab_report', lab));
  const heldId = await post(request('prescription', held));
  const patient = await s.fhirCreate(emrPatient(fromEmr.phone, { name: [{ text: fromEmr.name }] }));
  const filed = await s.fhirCreate(labReportDocument(patient.id, fromEmr.label, { data: fromEmr.pdf.toString('base64') }));
  await until(s, labId, 'SENT');
  await until(s, filed.id, 'SENT');
  await until(s, heldId, 'HELD');
  // Both lab reports reached their patient.
  for (const phone of [lab.phone, fromEmr.phone])
    expect((await s.simGet<unknown[]>(`/_sim/messages?phone=${encodeURIComponent(phone)}`)).body, phone).toHaveLength(1);
  const events = await allEventsSettled(s);
  // 3 patient.created and 3 appointment.created at least (the documents' patients add theirs).
  expect(events.length).toBeGreaterThanOrEqual(6);

  expect((await s.simPost('/_sim/faults', { integration: { status: 503, count: 10_000 } })).status).toBe(200);
  const waitingId = await post(request('lab_report', waiting));
  await waitFor(
    async () => {
      const d = (await s.admin<{ document?: { status: string; attempts: number } }>('GET', `/documents/${waitingId}`)).body.document;
      return d && d.status === 'queued' && d.attempts >= 1 ? d : undefined;
    },
    20_000,
    100,
  );
  return { events: events.length, waiting: waitingId };
}

/** A scanned set: its name, the files (or dump) read and their sizes, and the hits. */
interface ScannedSet {
  name: string;
  scanned: { file: string; bytes: number }[];
  hits: Hit[];
}

const listed = (set: ScannedSet) => set.scanned.map((f) => `${f.file} (${f.bytes} bytes)`).join(', ');

/** Sealed: no marker in any set. Off: each set holds the name, the phone and the PDF's bytes. */
function expectScans(mode: Mode, sets: ScannedSet[]): void {
  for (const set of sets) {
    expect(set.scanned.length, `${set.name}: nothing scanned`).toBeGreaterThan(0);
    if (mode === 'sealed') {
      expect(set.hits, `${set.name}: patient data in clear in ${listed(set)}:\n${describeHits(set.hits)}`).toEqual([]);
    } else {
      const found = rolesFound(set.hits);
      expect(
        MUST_FIND.filter((r) => !found.has(r)),
        `${set.name} (DATA_ENCRYPTION=off): the scan of ${listed(set)} should find the markers; found only:\n${describeHits(set.hits)}`,
      ).toEqual([]);
    }
  }
}

/** Stored rows are there, sealed (or clear with DATA_ENCRYPTION=off): the scan had something to find. */
function expectStored(mode: Mode, bodies: Buffer[], waitingRequest: string | null | undefined, events: number): void {
  expect(bodies.length).toBeGreaterThanOrEqual(events);
  for (const body of bodies) {
    if (mode === 'sealed') expect(body.subarray(0, SEALED_HEAD.length).toString('latin1')).toBe(SEALED_HEAD);
    else expect(body.subarray(0, 1).toString('latin1')).toBe('{');
  }
  expect(typeof waitingRequest, 'the waiting document keeps its request').toBe('string');
  if (mode === 'sealed') expect(waitingRequest!.slice(0, SEALED_HEAD.length)).toBe(SEALED_HEAD);
  else expect(waitingRequest!.slice(0, 1)).toBe('{');
}

let stack: Stack | undefined;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  await stack?.close();
  stack = undefined;
  for (const c of cleanups.splice(0).reverse()) await c();
});

const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

describe('patient data at rest on SQLite', () => {
  async function run(mode: Mode): Promise<void> {
    const m = makeMarkers();
    const scanner = markerScanner(m.all);
    const dataDir = tempDir('emr-bridge-at-rest-sqlite-');
    const backupDir = tempDir('emr-bridge-at-rest-backup-');
    // No key setting: outside production with SQLite the adapter generates DATA_DIR/data-keys.json, as `npm start` does.
    stack = await startStack({ clinic: NO_QUIET_HOURS, settings: { DATA_DIR: dataDir, ...(mode === 'off' ? { DATA_ENCRYPTION: 'off' } : {}) } });
    const { events, waiting } = await work(stack, m);
    const database = join(dataDir, 'emr-bridge.db');
    if (mode === 'sealed') expect(statSync(join(dataDir, 'data-keys.json')).mode & 0o777).toBe(0o600);

    // While it runs: everything in DATA_DIR (the database, its -wal and -shm, the lock, the key file).
    const running = { name: 'SQLite DATA_DIR while the adapter runs', ...scanner.scanFiles(filesUnder(dataDir)) };
    for (const suffix of ['', '-wal', '-shm'])
      expect(
        running.scanned.map((f) => f.file),
        `${database}${suffix} scanned`,
      ).toContain(`${database}${suffix}`);

    // A backup taken meanwhile, as an operator would, with the adapter's settings.
    const backupFile = join(backupDir, 'emr-bridge-backup.db');
    const made = await runCli(['backup', '--out', backupFile], {
      DATA_DIR: dataDir,
      DATABASE_PATH: '',
      DATABASE_URL: '',
      SERVICE_BASE_URL: '',
      FHIR_BASE_URL: '',
      DATA_ENCRYPTION: mode === 'off' ? 'off' : '',
    });
    expect(made.code, made.out).toBe(0);
    const backup = { name: '`emr-bridge backup` copy', ...scanner.scanFiles([backupFile]) };

    // Stopped: what stays on disk (the WAL folded into the database).
    await stack.close();
    stack = undefined;
    const stopped = { name: 'SQLite DATA_DIR after the adapter stopped', ...scanner.scanFiles(filesUnder(dataDir)) };
    expect(
      stopped.scanned.map((f) => f.file),
      database,
    ).toContain(database);

    expectScans(mode, [running, backup, stopped]);

    const copy = new Database(backupFile, { readonly: true });
    try {
      const bodies = (copy.prepare('SELECT body FROM inbox_events WHERE body IS NOT NULL').pluck().all() as Buffer[]).map((b) => Buffer.from(b));
      const request = copy.prepare('SELECT request FROM outbox_documents WHERE external_id = ?').pluck().get(waiting) as string | null | undefined;
      expectStored(mode, bodies, request, events);
    } finally {
      copy.close();
    }
  }

  it('sealed: no name, phone, note, label or PDF byte in the database, its WAL and shared memory, or a backup', () => run('sealed'), 90_000);
  it('with DATA_ENCRYPTION=off the same scan finds them (the scan works)', () => run('off'), 90_000);
});

describe('patient data at rest on PostgreSQL', () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startEmbeddedPostgres();
  }, 60_000);
  afterAll(async () => server?.stop());

  async function onServer<T>(database: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: server.url(database) });
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end();
    }
  }

  /** Every table of the database as text, one row a line: `SELECT t::text FROM <table> t` (pg_dump's stand-in). */
  async function textDump(database: string): Promise<Buffer> {
    return onServer(database, async (c) => {
      const tables = (
        await c.query<{ schema: string; name: string }>(
          "SELECT table_schema AS schema, table_name AS name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2",
        )
      ).rows;
      expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['inbox_events', 'outbox_documents']));
      const parts: string[] = [];
      for (const t of tables) {
        const q = `${c.escapeIdentifier(t.schema)}.${c.escapeIdentifier(t.name)}`;
        const rows = (await c.query<{ row: string }>(`SELECT t::text AS row FROM ${q} t`)).rows;
        parts.push(`-- ${q}\n${rows.map((r) => r.row).join('\n')}\n`);
      }
      return Buffer.from(parts.join(''));
    });
  }

  /** pg_dump's output when a pg_dump as new as the server is on PATH; otherwise none, and why. */
  async function pgDump(database: string): Promise<{ out?: Buffer; why: string }> {
    const serverMajor = Math.floor(Number((await onServer('postgres', (c) => c.query<{ v: string }>('SHOW server_version_num'))).rows[0]!.v) / 10000);
    let version: string;
    try {
      version = execFileSync('pg_dump', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    } catch {
      return { why: `no pg_dump on PATH (the embedded server's binaries ship none); server ${serverMajor}` };
    }
    const major = Number(/(\d+)(?:\.\d+)?/.exec(version)?.[1]);
    if (!(major >= serverMajor)) return { why: `pg_dump ${major} on PATH cannot dump a PostgreSQL ${serverMajor} server` };
    const out = execFileSync('pg_dump', ['--no-owner', `--dbname=${server.url(database)}`], { maxBuffer: 256 * 1024 * 1024 });
    return { out, why: `pg_dump ${major}` };
  }

  async function run(mode: Mode): Promise<void> {
    const m = makeMarkers();
    const scanner = markerScanner(m.all);
    const database = `at_rest_${mode}_${randomWord(8)}`;
    await onServer('postgres', (c) => c.query(`CREATE DATABASE ${database}`));
    const url = server.url(database);
    const pool = new pg.Pool({ connectionString: url });
    try {
      await migratePostgres(pool, 'test');
    } finally {
      await pool.end();
    }
    const dataDir = tempDir('emr-bridge-at-rest-pg-');
    const settings: Record<string, string> = { DATA_DIR: dataDir, DATABASE_URL: url };
    if (mode === 'sealed') {
      // What `emr-bridge data-keys generate --out FILE` writes (src/cli/data-keys.ts), made by the same functions.
      const keyFile = join(tempDir('emr-bridge-at-rest-keys-'), 'data-keys.json');
      writeKeyFile(keyFile, generateKeyFile(systemClock));
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      settings.DATA_KEYS_PATH = keyFile;
    } else {
      settings.DATA_ENCRYPTION = 'off';
    }
    stack = await startStack({ clinic: NO_QUIET_HOURS, settings });
    const { events, waiting } = await work(stack, m);
    await stack.close();
    stack = undefined;

    // Every dirty page written to the data folder's files, then every file of the folder (all databases, the WAL).
    await onServer('postgres', (c) => c.query('CHECKPOINT'));
    const folder = { name: `PostgreSQL data folder ${server.dataDir} after CHECKPOINT`, ...scanner.scanFiles(filesUnder(server.dataDir)) };
    expect(folder.scanned.some((f) => f.file.includes(`${join(server.dataDir, 'pg_wal')}/`))).toBe(true);
    expect(folder.scanned.some((f) => f.file.includes(`${join(server.dataDir, 'base')}/`))).toBe(true);
    // pg_dump's output when a pg_dump that can dump this server is found; the text dump of every table always.
    const dumped = await pgDump(database);
    const dump = await textDump(database);
    const substitute = {
      name: `SELECT t::text FROM every table of ${database} (pg_dump substitute${dumped.out ? '' : `: ${dumped.why}`})`,
      scanned: [{ file: `text dump of ${database}`, bytes: dump.length }],
      hits: scanner.scanBuffer(`text dump of ${database}`, dump),
    };
    const sets: ScannedSet[] = [folder, substitute];
    if (dumped.out)
      sets.push({
        name: dumped.why,
        scanned: [{ file: `pg_dump of ${database}`, bytes: dumped.out.length }],
        hits: scanner.scanBuffer(`pg_dump of ${database}`, dumped.out),
      });
    // Whatever the adapter put in its DATA_DIR with its state in PostgreSQL (nothing, or a lock file).
    const adapterFiles = { name: 'adapter DATA_DIR', ...scanner.scanFiles(filesUnder(dataDir)) };
    if (mode === 'sealed' && adapterFiles.scanned.length) sets.push(adapterFiles);
    expectScans(mode, sets);

    await onServer(database, async (c) => {
      const bodies = (await c.query<{ body: Buffer }>('SELECT body FROM inbox_events WHERE body IS NOT NULL')).rows.map((r) => r.body);
      const request = (await c.query<{ request: string | null }>('SELECT request FROM outbox_documents WHERE external_id = $1', [waiting])).rows[0]?.request;
      expectStored(mode, bodies, request, events);
    });
  }

  it('sealed: no name, phone, note, label or PDF byte in the data folder after a checkpoint, or in a dump of the tables', () => run('sealed'), 90_000);
  it('with DATA_ENCRYPTION=off the same scan finds them (the scan works)', () => run('off'), 90_000);
});
