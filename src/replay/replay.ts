// Replays sample payloads at a receiver the way the service would send them: signed with the current
// time, the seven headers; each entity's events in file order, each sent once the one before was answered
// (./entity-chains.ts), different entities several at once. With an admin URL and
// token it also waits for each event's processing outcome (and each document's status) and compares
// every outcome with the sample's expectation. --fresh-ids gives events, entities and documents new
// ids (consistently within the run) so the same samples can be replayed again and again. At an adapter that
// books into the EMR's Slots, the samples' doctors and locations are mapped and their appointments moved onto
// free Slots first (./slot-plan.ts).
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { sleep, type Clock } from '../clock.ts';
import { signedWebhookHeaders } from '../signature/webhook-signature.ts';
import { entityChains } from './entity-chains.ts';
import { loadSamples, type Delivery, type Expectation, type Sample } from './samples.ts';
import { placeOnSlots, type SlotTarget } from './slot-plan.ts';

export interface ReplayOptions {
  paths: string[];
  /** The receiver, e.g. http://127.0.0.1:3000/webhooks/service. */
  to: string;
  secrets: string[];
  keyId: string;
  freshIds?: boolean;
  /** How many entities are replayed at once; one entity's events always go one after another. */
  concurrency?: number;
  /** The adapter's base URL for outcomes (default: the origin of `to`). */
  adminUrl?: string;
  adminToken?: string;
  out: (line: string) => void;
  clock: Clock;
  /** How long to wait for a final processing state. */
  outcomeTimeoutMs?: number;
  /** The adapter books appointments into the EMR's Slots: map the samples' roster and move their times onto free Slots first. */
  slots?: SlotTarget;
}

export interface ReplayRow {
  sample: string;
  step: number;
  expected: string;
  actual: string;
  ok: boolean;
}

const ID_KEYS = new Set(['eventId', 'serviceId', 'externalId', 'patientServiceId']);

/** Rewrites ids with one map per run, so repeats within a run stay repeats. */
function freshen(value: unknown, ids: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => freshen(v, ids));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => {
      if (ID_KEYS.has(k) && typeof v === 'string') {
        if (!ids.has(v)) ids.set(v, k === 'eventId' ? randomUUID() : `${v}-${randomUUID().slice(0, 8)}`);
        return [k, ids.get(v)];
      }
      return [k, freshen(v, ids)];
    }),
  );
}

const describeExpect = (e: Expectation) =>
  [`http ${e.http}`, e.duplicate === undefined ? '' : `duplicate ${e.duplicate}`, e.state ?? '', e.status === undefined ? '' : [e.status].flat().join('|')]
    .filter(Boolean)
    .join(', ');

/** One replay: its options, its id map (--fresh-ids), the adapter's base URL, and the rows so far. */
interface Run {
  opts: ReplayOptions;
  ids: Map<string, string>;
  admin: string;
  rows: ReplayRow[];
}

/** The id a service id is sent under: --fresh-ids' new one (the same all run long), else itself. */
const sentId = (run: Run, serviceId: string): string => (run.opts.freshIds ? (freshen({ serviceId }, run.ids) as { serviceId: string }).serviceId : serviceId);

export async function runReplay(opts: ReplayOptions): Promise<{ rows: ReplayRow[]; mismatches: number }> {
  const run: Run = { opts, ids: new Map(), admin: (opts.adminUrl ?? new URL(opts.to).origin).replace(/\/+$/, ''), rows: [] };
  const loaded = loadSamples(opts.paths);
  const samples = opts.slots ? await placeOnSlots(loaded, opts.slots, (id) => sentId(run, id), opts.out) : loaded;
  const progress = progressCounter(samples.length, opts.out);
  await inChains(entityChains(samples), opts.concurrency ?? 4, async (s) => {
    await replaySample(run, s);
    progress();
  });
  return report(run.rows, opts.out);
}

/** One entity's samples one after another (each waits for the answer before); `concurrency` entities at once. */
async function inChains(queue: Sample[][], concurrency: number, each: (s: Sample) => Promise<void>): Promise<void> {
  async function worker(): Promise<void> {
    for (let chain = queue.shift(); chain; chain = queue.shift()) for (const s of chain) await each(s);
  }
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
}

/** Counts samples done; in a run of more than five, says so every fifth and at the last. */
function progressCounter(total: number, out: (line: string) => void): () => void {
  let done = 0;
  return () => {
    done++;
    if (total > 5 && (done % 5 === 0 || done === total)) out(`progress: ${done}/${total} samples`);
  };
}

async function replaySample(run: Run, s: Sample): Promise<void> {
  if (s.document) {
    if (run.opts.adminToken) await pushDocument(run, s);
    else run.rows.push({ sample: s.name, step: 1, expected: 'document', actual: 'skipped: needs --admin-token', ok: true });
  } else for (const [i, step] of s.steps.entries()) await deliver(run, s, step, i);
}

/** Sends one webhook as the service would, and compares its answer (and outcome) with the step's expectation. */
async function deliver(run: Run, sample: Sample, step: Delivery, index: number): Promise<void> {
  const { opts, ids } = run;
  const body = step.rawBody !== undefined ? Buffer.from(step.rawBody) : Buffer.from(JSON.stringify(opts.freshIds ? freshen(step.body, ids) : step.body));
  const parsedBody = step.body ? (JSON.parse(body.toString()) as Record<string, unknown>) : undefined;
  const eventId = eventIdOf(run, step, parsedBody);
  const res = await request(opts.to, {
    method: 'POST',
    headers: signedWebhookHeaders({
      keyId: opts.keyId,
      secrets: step.signature === 'invalid' ? ['not-the-signing-secret'] : opts.secrets,
      timestamp: Math.floor(opts.clock.now() / 1000),
      body,
      eventId,
      eventType: String(parsedBody?.eventType ?? step.eventType ?? 'unknown'),
      attempt: 1,
    }),
    body,
  });
  const duplicate = duplicateOf(await res.body.text());
  const e = step.expect;
  const actual: Expectation = { http: res.statusCode, ...(e.duplicate === undefined ? {} : { duplicate: duplicate ?? false }) };
  if (e.state && opts.adminToken && res.statusCode === 200) {
    actual.state = (await waitFor(run, `/events/${encodeURIComponent(eventId)}`, (b) =>
      ['applied', 'discarded_stale', 'dead'].includes(String(b.state)) ? String(b.state) : undefined,
    )) as Expectation['state'];
  }
  const expectedText = describeExpect(opts.adminToken ? e : { ...e, state: undefined });
  const actualText = describeExpect(actual);
  run.rows.push({ sample: sample.name, step: index + 1, expected: expectedText, actual: actualText, ok: expectedText === actualText });
}

/** The body's eventId; else the step's (freshened with the body's ids); else a new one. */
function eventIdOf(run: Run, step: Delivery, parsedBody: Record<string, unknown> | undefined): string {
  if (parsedBody?.eventId) return String(parsedBody.eventId);
  if (step.eventId) return run.opts.freshIds ? (freshen({ eventId: step.eventId }, run.ids) as { eventId: string }).eventId : step.eventId;
  return randomUUID();
}

/** The receiver's `duplicate` flag, when its answer is JSON that has one. */
function duplicateOf(text: string): boolean | undefined {
  try {
    return (JSON.parse(text) as { duplicate?: boolean }).duplicate;
  } catch {
    return undefined;
  }
}

/** Hands a sample document to the adapter's admin API and compares where it ends with the expectation. */
async function pushDocument(run: Run, sample: Sample): Promise<void> {
  const { opts } = run;
  const d = sample.document!;
  const req = (opts.freshIds ? freshen(d.request, run.ids) : d.request) as Record<string, unknown>;
  const res = await request(`${run.admin}/admin/documents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${opts.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ documentType: d.documentType, ...req }),
  });
  await res.body.dump();
  const actual: Expectation = { http: res.statusCode };
  if (d.expect.status !== undefined && res.statusCode < 300) {
    const status = await waitFor(run, `/documents/${encodeURIComponent(String(req.externalId))}`, (b) => {
      const s = (b.document as { status?: string } | undefined)?.status;
      return s && s !== 'queued' ? s : undefined;
    });
    actual.status = [d.expect.status].flat().includes(status) ? d.expect.status : status;
  }
  const expectedText = describeExpect(d.expect);
  run.rows.push({ sample: sample.name, step: 1, expected: expectedText, actual: describeExpect(actual), ok: expectedText === describeExpect(actual) });
}

async function adminGet(run: Run, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await request(`${run.admin}/admin${path}`, { headers: { authorization: `Bearer ${run.opts.adminToken}` } });
  const text = await res.body.text();
  return { status: res.statusCode, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

/** Polls an admin URL until `read` finds a final value in its answer; else says why not, at the timeout. */
async function waitFor(run: Run, path: string, read: (b: Record<string, unknown>) => string | undefined): Promise<string> {
  const { clock } = run.opts;
  const deadline = clock.now() + (run.opts.outcomeTimeoutMs ?? 15_000);
  let last = 'unknown';
  while (clock.now() < deadline) {
    const res = await adminGet(run, path);
    const v = res.status === 200 ? read(res.body) : undefined;
    if (v) return v;
    last = res.status === 200 ? 'not final yet' : `admin ${res.status}`;
    await sleep(100);
  }
  return last;
}

/** Prints the rows, sorted, as a table with a closing count; returns them with the mismatches. */
function report(rows: ReplayRow[], out: (line: string) => void): { rows: ReplayRow[]; mismatches: number } {
  rows.sort((a, b) => a.sample.localeCompare(b.sample) || a.step - b.step);
  const width = Math.max(6, ...rows.map((r) => `${r.sample}#${r.step}`.length));
  out(`${'sample'.padEnd(width)}  ${'expected'.padEnd(40)}  ${'actual'.padEnd(40)}  result`);
  for (const r of rows) out(`${`${r.sample}#${r.step}`.padEnd(width)}  ${r.expected.padEnd(40)}  ${r.actual.padEnd(40)}  ${r.ok ? 'ok' : 'MISMATCH'}`);
  const mismatches = rows.filter((r) => !r.ok).length;
  out(`${rows.length - mismatches} matched, ${mismatches} mismatched`);
  return { rows, mismatches };
}
