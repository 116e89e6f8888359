// What the vendor profile's booking tests share: a vendor server on a manual clock (Friday 6 March 2026, 10:00 in
// New York, two days before the clocks go forward), plain HTTP calls, and the few records a booking needs, each
// builder taking the one thing a test changes. Every server and data directory is removed after each test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { createManualClock, type ManualClock } from '../../../src/clock.ts';
import { type RunningFhirServer, startFhirServer } from '../../../src/fhir-server/server.ts';
import { silentLogger } from '../../../src/logger.ts';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** 2026-03-06 10:00 America/New_York (EST, -05:00), a Friday. */
export const FRIDAY_10AM = Date.parse('2026-03-06T15:00:00Z');

export interface Vendor {
  base: string;
  port: number;
  clock: ManualClock;
  server: RunningFhirServer;
}

export async function startVendor(opts: { clock?: ManualClock; dataFile?: string; port?: number; masterDataFile?: string } = {}): Promise<Vendor> {
  const clock = opts.clock ?? createManualClock(FRIDAY_10AM);
  const server = await startFhirServer({
    port: opts.port ?? 0,
    logger: silentLogger(),
    profile: 'vendor',
    clock,
    ...(opts.dataFile ? { dataFile: opts.dataFile } : {}),
    ...(opts.masterDataFile ? { masterDataFile: opts.masterDataFile } : {}),
  });
  cleanups.push(() => server.close());
  return { base: server.baseUrl, port: server.port, clock, server };
}

/** A directory removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-vendor-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface Answer<T = Record<string, unknown>> {
  status: number;
  etag: string | null;
  headers: Headers;
  body: T & { id?: string; issue?: { code: string; details?: { text?: string } }[]; meta?: { versionId: string } };
}

export async function call<T = Record<string, unknown>>(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer<T>> {
  const res = await fetch(`${base}/${path}`, {
    method,
    headers: { 'content-type': method === 'PATCH' ? 'application/json-patch+json' : 'application/fhir+json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, etag: res.headers.get('etag'), headers: res.headers, body: text ? JSON.parse(text) : {} };
}

/** The text of an OperationOutcome's first issue. */
export const why = (a: Answer): string => a.body.issue?.[0]?.details?.text ?? '';

export interface SlotRecord {
  id: string;
  status: string;
  start: string;
  end: string;
  schedule: { reference: string };
  meta: { versionId: string };
}

interface SearchSet<T> {
  total?: number;
  entry?: { resource: T; search?: { mode: string } }[];
  link?: { relation: string; url: string }[];
}

export async function search<T = SlotRecord>(base: string, query: string): Promise<SearchSet<T> & { status: number }> {
  const answer = await call<SearchSet<T>>(base, 'GET', query);
  return { ...answer.body, status: answer.status };
}

export const slotsOf = async (base: string, query: string): Promise<SlotRecord[]> => ((await search(base, query)).entry ?? []).map((e) => e.resource);

/** The free Slot of the practitioner (pr-1001 unless said) starting at the instant, as the adapter finds it. */
export async function freeSlot(base: string, startsAt: string, practitioner = 'pr-1001'): Promise<SlotRecord> {
  const [slot, ...more] = await slotsOf(base, `Slot?schedule.actor=Practitioner/${practitioner}&start=eq${encodeURIComponent(startsAt)}&status=free`);
  if (!slot || more.length) throw new Error(`expected one free Slot at ${startsAt} for ${practitioner}`);
  return slot;
}

export async function createPatient(base: string): Promise<string> {
  const created = await call(base, 'POST', 'Patient', { resourceType: 'Patient', name: [{ given: ['Maria'], family: 'Lopez' }] });
  return created.body.id!;
}

/** An Appointment as a client books it under the rules; `o` changes one thing. */
export const booking = (slotId: string, patientId: string, o: Record<string, unknown> = {}) => ({
  resourceType: 'Appointment',
  status: 'booked',
  slot: [{ reference: `Slot/${slotId}` }],
  participant: [{ actor: { reference: `Patient/${patientId}` }, status: 'accepted' }],
  ...o,
});

export interface Booked {
  id: string;
  etag: string;
  slot: SlotRecord;
}

/** Books the free Slot at the instant for a new patient. */
export async function book(base: string, startsAt: string, practitioner = 'pr-1001'): Promise<Booked & { patientId: string }> {
  const slot = await freeSlot(base, startsAt, practitioner);
  const patientId = await createPatient(base);
  const created = await call(base, 'POST', 'Appointment', booking(slot.id, patientId));
  if (created.status !== 201 || !created.etag) throw new Error(`booking failed: ${created.status} ${JSON.stringify(created.body)}`);
  return { id: created.body.id!, etag: created.etag, slot, patientId };
}

export const readSlot = async (base: string, id: string): Promise<SlotRecord> => (await call<SlotRecord>(base, 'GET', `Slot/${id}`)).body;
