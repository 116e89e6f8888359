// The runtime with a pushed EMR (the in-memory one in that shape: ids named later, documents handed in), over
// the real simulator: a claim posts no mapping until the EMR names its id, then each mapping reaches the service
// once and later events go by that id; a document the EMR hands in reaches the service once, however often it
// is handed in again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.ts';
import { createPushedMemoryEmr, type PushedMemoryEmr } from '../../src/emr/memory/pushed.ts';
import { silentLogger } from '../../src/logger.ts';
import { type RunningAdapter, startAdapter } from '../../src/runtime/adapter.ts';
import { json } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';

interface Snapshot {
  serviceId: string;
  appointment: { externalId: string | null };
  patient: { serviceId: string; externalId: string | null; phone: string };
  doctor: { serviceId: string; externalId: string | null };
  location: { serviceId: string; externalId: string | null };
}

describe('an adapter beside a pushed EMR', () => {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-pushed-emr-'));
  let adapter: RunningAdapter;
  let emr: PushedMemoryEmr;
  const snapshot = async (serviceId: string) => (await json<Snapshot>('GET', `${adapter.serviceUrl}/_sim/appointments/${serviceId}`)).body;

  beforeAll(async () => {
    emr = createPushedMemoryEmr();
    adapter = await startAdapter({ config: parseConfig({ PORT: '0', DATA_DIR: dir, PROCESSOR_POLL_MS: '20' }), logger: silentLogger(), emr });
  });
  afterAll(async () => {
    await adapter?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('posts each mapping once the EMR names its id, not before, and applies later events by that id', async () => {
    const created = (await json<Snapshot>('POST', `${adapter.serviceUrl}/_sim/appointments`, { clinicId: adapter.clinicId })).body;
    await waitFor(() => emr.emr.records.appointment.has(created.serviceId) || undefined);
    // Applied, but the EMR has named nothing yet: the service holds no mapping.
    await new Promise((r) => setTimeout(r, 200));
    expect(await snapshot(created.serviceId)).toMatchObject({ appointment: { externalId: null }, patient: { externalId: null } });

    await emr.feed();
    const ids = {
      appointment: emr.emr.records.appointment.get(created.serviceId)!.id,
      patient: emr.emr.records.patient.get(created.patient.serviceId)!.id,
      doctor: emr.emr.records.practitioner.get(created.doctor.serviceId)!.id,
      location: emr.emr.records.location.get(created.location.serviceId)!.id,
    };
    const mapped = await waitFor(async () => {
      const s = await snapshot(created.serviceId);
      return s.appointment.externalId && s.patient.externalId && s.doctor.externalId && s.location.externalId ? s : undefined;
    });
    expect(mapped).toMatchObject({
      appointment: { externalId: ids.appointment },
      patient: { externalId: ids.patient },
      doctor: { externalId: ids.doctor },
      location: { externalId: ids.location },
    });
    expect(emr.identified.filter((r) => r.serviceId === created.serviceId)).toHaveLength(1);

    await json('POST', `${adapter.serviceUrl}/_sim/appointments/${created.serviceId}/cancel`);
    await waitFor(() => emr.emr.appointments().find((a) => a.id === ids.appointment && a.status === 'Cancelled'));
    expect(emr.emr.records.appointment.size).toBe(1);
  });

  it('sends a document the EMR hands in to the service once, however often it is handed in', async () => {
    const created = (await json<Snapshot>('POST', `${adapter.serviceUrl}/_sim/appointments`, { clinicId: adapter.clinicId })).body;
    await waitFor(() => emr.emr.records.patient.get(created.patient.serviceId));
    await emr.feed();
    const patient = emr.emr.records.patient.get(created.patient.serviceId)!;
    const doc = {
      id: 'pushed-lab-1',
      version: '1',
      documentType: 'lab_report' as const,
      label: 'Lipid panel',
      filename: 'lipids.pdf',
      mimeType: 'application/pdf',
      content: { base64: Buffer.from('%PDF-1.4\n% pushed\n%%EOF\n').toString('base64') },
      patient: { id: patient.id, serviceId: created.patient.serviceId, name: 'Pushed Patient', phone: created.patient.phone },
      lastUpdated: new Date().toISOString(),
    };
    emr.fileDocument(doc);
    await emr.feed();
    emr.fileDocument(doc);
    await emr.feed();
    // Sent (or held for quiet hours, by the clinic's clock): either way the service took it, once.
    const status = async () =>
      (
        await json<{ document?: { status: string; serviceId?: string } }>('GET', `${adapter.adminUrl}/admin/documents/${doc.id}`, undefined, {
          authorization: `Bearer ${adapter.adminToken}`,
        })
      ).body.document;
    const taken = await waitFor(async () => {
      const d = await status();
      return d && (d.status === 'SENT' || d.status === 'HELD') ? d : undefined;
    });
    expect(taken.serviceId).toBeTruthy();
    emr.fileDocument(doc);
    await emr.feed();
    expect((await status())?.serviceId).toBe(taken.serviceId);
    expect(emr.waiting()).toEqual({ identities: 0, documents: 0 });
  });
});
