// The console's data port (src/console/data-source.ts) as the running adapter builds it, on its SQLite store
// with the in-memory EMR: after real webhooks from the bundled simulator, an event shows its headers, its state
// history and the FHIR references it wrote; the overview counts it per minute with the acknowledgement latency;
// mappings are found both ways; a pushed document shows its history; the actions refuse what they cannot do.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ConsoleActions, ConsoleData } from '../../src/console/data.ts';
import { parseConfig } from '../../src/config.ts';
import { createMemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { startAdapter, type RunningAdapter } from '../../src/runtime/adapter.ts';
import { json } from '../support/stack.ts';
import { PDF } from '../support/simulator-fixture.ts';
import { waitFor } from '../support/wait.ts';

// The data port and actions the adapter builds, as it built them.
const built = vi.hoisted(() => ({}) as { data?: ConsoleData; actions?: ConsoleActions });
vi.mock('../../src/console/data-source.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/console/data-source.ts')>();
  return {
    ...real,
    createConsoleData: (deps: Parameters<typeof real.createConsoleData>[0]) => (built.data = real.createConsoleData(deps)),
    createConsoleActions: (deps: Parameters<typeof real.createConsoleActions>[0]) => (built.actions = real.createConsoleActions(deps)),
  };
});

const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-console-data-'));
const emr = createMemoryEmr();
let adapter: RunningAdapter;
let appointmentId: string;
const data = () => built.data!;

beforeAll(async () => {
  adapter = await startAdapter({ config: parseConfig({ PORT: '0', DATA_DIR: dir, PUSHER_SCAN_CRON: '0 0 1 1 *' }), logger: silentLogger(), emr });
  const created = await json<{ serviceId: string }>('POST', `${adapter.serviceUrl}/_sim/appointments`, { clinicId: adapter.clinicId });
  appointmentId = created.body.serviceId;
  await waitFor(() => emr.records.appointment.has(appointmentId) || undefined);
});
afterAll(async () => {
  await adapter?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the console data of a running adapter', () => {
  it('shows an applied event with its headers, its history from received to applied, and the FHIR ids it wrote', async () => {
    const page = await waitFor(async () => {
      const p = await data().events({ serviceId: appointmentId, state: 'applied', limit: 10 });
      return p.rows.length ? p : undefined;
    });
    const event = (await data().event(page.rows[0]!.eventId))!;
    expect(event).toMatchObject({ eventType: 'appointment.created', entityKey: `appointment:${appointmentId}`, state: 'applied', bodyStored: true });
    expect(event.headers).toMatchObject({ 'x-service-event-id': event.eventId });
    expect(event.history.map((h) => h.state)).toEqual(['received', 'applied']);
    expect(event.history[1]).toMatchObject({ attempt: 1, reason: null });
    const records = emr.records;
    expect(event.emrRefs.sort()).toEqual(
      [
        `Appointment/${records.appointment.get(appointmentId)!.id}`,
        ...[...records.patient.values()].map((r) => `Patient/${r.id}`),
        ...[...records.practitioner.values()].map((r) => `Practitioner/${r.id}`),
        ...[...records.location.values()].map((r) => `Location/${r.id}`),
      ].sort(),
    );
    expect(JSON.parse((await data().eventBody(event.eventId))!)).toMatchObject({ eventId: event.eventId });
  });

  it('counts it in the overview: per minute, the acknowledgement latency, each dependency', async () => {
    const overview = await data().overview();
    expect(overview.perMinute).toHaveLength(24 * 60);
    const last = overview.perMinute.slice(-2);
    expect(last.reduce((n, m) => n + m.received, 0)).toBeGreaterThanOrEqual(1);
    expect(last.reduce((n, m) => n + m.applied, 0)).toBeGreaterThanOrEqual(1);
    expect(overview.ackLatencyMs).toEqual({ p50: expect.any(Number), p99: expect.any(Number) });
    expect(overview.ackLatencyMs!.p50).toBeGreaterThan(0);
    expect(overview.ackLatencyMs!.p99).toBeGreaterThanOrEqual(overview.ackLatencyMs!.p50);
    expect(overview.components.map((c) => [c.name, c.ok])).toEqual([
      ['database', true],
      ['emr', true],
      ['service', true],
    ]);
    expect(overview).toMatchObject({ inboxDepth: 0, inboxOldestAt: null, inboxAgeMs: null, deadLetters: 0, deadMappings: 0, openAlerts: [] });
    expect(await data().deadMappings({ limit: 10 })).toEqual({ rows: [], next: null });
  });

  it('finds the mappings the event made, by serviceId and by EMR id', async () => {
    const emrId = emr.records.appointment.get(appointmentId)!.id;
    const byService = await data().mappings({ serviceId: appointmentId });
    expect(byService).toEqual([{ entityType: 'appointment', serviceId: appointmentId, emrId, posted: expect.any(Boolean) }]);
    expect(await data().mappings({ emrId: `Appointment/${emrId}` })).toEqual(byService);
    expect(await data().mappings({ emrId: `Location/${emrId}` })).toEqual([]);
  });

  it("shows a pushed document's history to SENT, and refuses to retry it", async () => {
    const externalId = `console-data-${Date.now()}`;
    const pushed = await json(
      'POST',
      `${adapter.adminUrl}/admin/documents`,
      {
        documentType: 'lab_report',
        externalId,
        label: 'Blood count',
        patientPhone: '+15550001111',
        patientName: 'Synthetic Patient',
        file: { base64: PDF.toString('base64'), filename: 'blood.pdf' },
      },
      { authorization: `Bearer ${adapter.adminToken}` },
    );
    expect(pushed.status).toBe(202);
    const doc = await waitFor(async () => {
      const d = await data().document(externalId);
      return d && d.status !== 'queued' ? d : undefined;
    });
    expect(doc.history.map((h) => h.status)).toEqual(['queued', doc.status]);
    expect(doc.retryable).toBe(false);
    expect((await data().documents({ status: doc.status, limit: 5 })).rows.map((r) => r.externalId)).toContain(externalId);
    expect(await built.actions!.retryDocument(externalId)).toEqual({ ok: false, reason: expect.stringMatching(/only a document that failed/) });
    expect(await built.actions!.retryDocument('nope')).toEqual({ ok: false, reason: 'no such document' });
    expect(await built.actions!.replay(['nope'])).toEqual({ replayed: [], notDead: ['nope'] });
  });
});
