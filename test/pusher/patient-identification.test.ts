// How the scan names the patient of an EMR document to the service: by the EMR's own Patient id
// (patientExternalId) whenever the service can take it (it knows the patient, or phone and name come
// along to create it under that id), and never an id alone that would identify nobody.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import type { EmrDocument } from '../../src/emr/port.ts';
import { createMemoryEmr } from '../../src/emr/memory/index.ts';
import { silentLogger } from '../../src/logger.ts';
import { createScanner } from '../../src/pusher/scan.ts';
import { createSqliteDocumentStore } from '../../src/storage/sqlite/documents.ts';
import { PDF } from '../support/simulator-fixture.ts';
import { openTestDatabase } from './sqlite-stores.ts';

async function scanned(patient: EmrDocument['patient']) {
  const emr = createMemoryEmr();
  const outbox = createSqliteDocumentStore(openTestDatabase(), createManualClock());
  emr.documents.push({
    id: 'dr-1',
    version: '1',
    documentType: 'lab_report',
    label: 'CBC',
    filename: 'cbc.pdf',
    content: { base64: PDF.toString('base64') },
    patient,
    lastUpdated: '2026-01-15T09:00:00.000Z',
  });
  await createScanner({ logger: silentLogger(), emr, outbox }).scanOnce();
  const row = (await outbox.get('dr-1'))!;
  return { state: row.state, code: row.error_code, request: row.request ? (JSON.parse(row.request) as Record<string, unknown>) : undefined };
}

describe('the patient of an EMR document', () => {
  it('a patient the service has not met goes by its EMR id together with phone and name', async () => {
    const { request } = await scanned({ id: 'emr-p1', name: 'Synthetic Patient', phone: '+15550001111' });
    expect(request).toMatchObject({ patientExternalId: 'emr-p1', patientPhone: '+15550001111', patientName: 'Synthetic Patient' });
  });

  it('a patient the service knows goes by its EMR id', async () => {
    const { request } = await scanned({ id: 'emr-p2', serviceId: 'pat_2' });
    expect(request).toMatchObject({ patientExternalId: 'emr-p2' });
  });

  it('a patient the service has not met, without a phone, is refused here with the reason', async () => {
    const { state, code, request } = await scanned({ id: 'emr-p3', name: 'Synthetic Patient' });
    expect(state).toBe('REJECTED');
    expect(code).toBe('patient_unresolvable');
    expect(request).toBeUndefined();
  });
});
