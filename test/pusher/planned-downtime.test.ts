// The pusher during a planned EMR downtime, on an injected clock: no scan of the EMR and no status written back
// to it while the window is in force (the documents already queued still go to the service, which is not
// down), and both resume once the window is over and the EMR answers.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { createMemoryEmr } from '../../src/emr/memory/index.ts';
import type { DocumentResource } from '../../src/contract/documents.ts';
import type { EmrDocument } from '../../src/emr/port.ts';
import { silentLogger } from '../../src/logger.ts';
import { createPusher } from '../../src/pusher/index.ts';
import { createEmrGate, withoutCallsDuringDowntime } from '../../src/runtime/emr-downtime.ts';
import { createDependencyStatus, observed } from '../../src/status/dependency-status.ts';
import { createEmrDowntime } from '../../src/status/emr-downtime.ts';
import { PDF } from '../support/simulator-fixture.ts';
import { openTestDatabase, sqlitePusherStores } from './sqlite-stores.ts';

const emrDoc = (id: string): EmrDocument => ({
  id,
  version: '1',
  documentType: 'lab_report',
  label: 'CBC',
  filename: 'cbc.pdf',
  content: { base64: PDF.toString('base64') },
  patient: { id: 'emr-patient-1', serviceId: 'pat_1' },
  lastUpdated: '2026-01-15T09:00:00.000Z',
});

describe('the pusher during a planned EMR downtime', () => {
  it('neither scans the EMR nor writes back to it during the window, sends to the service meanwhile, and resumes after it', async () => {
    const config = parseConfig({ EMR_DOWNTIME: '0 2 * * SUN@UTC/PT1H' });
    const clock = createManualClock(Date.parse('2026-03-01T01:50:00.000Z'));
    const logger = silentLogger();
    const db = openTestDatabase();
    const stores = sqlitePusherStores(db, clock);
    const memory = createMemoryEmr();
    memory.documents.push(emrDoc('dr-1'));
    const downtime = createEmrDowntime({ clock, logger, windows: config.emrDowntime });
    const status = createDependencyStatus({ clock, logger, downtime: (name) => (name === 'emr' ? downtime.current() : undefined) });
    const emr = withoutCallsDuringDowntime(observed(memory, 'emr', status), downtime);
    const emrGate = createEmrGate({ clock, emr, downtime, logger, resumed: () => undefined });
    const sent: string[] = [];
    const pusher = createPusher({
      ...stores,
      clock,
      logger,
      emr,
      config,
      emrGate,
      serviceClient: {
        async postDocument(_type, request) {
          sent.push(request.externalId);
          const resource: DocumentResource = {
            type: 'document',
            documentType: 'lab_report',
            serviceId: `doc_${request.externalId}`,
            externalId: request.externalId,
            patientServiceId: 'pat_1',
            status: 'SENT',
            sentAt: '2026-03-01T02:10:00.000Z',
            action: 'received',
          };
          return { httpStatus: 201, replayed: false, resource };
        },
        async getDocument() {
          return undefined;
        },
      },
    });
    // Scanned before the window: its send and the write-back of its outcome fall in the window.
    clock.set(Date.parse('2026-03-01T01:50:00.000Z'));
    expect(await pusher.scanOnce()).toBe(1);
    memory.documents.push(emrDoc('dr-2'));
    const callsBefore = memory.calls;

    clock.set(Date.parse('2026-03-01T02:10:00.000Z'));
    expect(await pusher.scanOnce()).toBe(0);
    await pusher.runOnce();
    expect(sent).toEqual(['dr-1']);
    expect(memory.calls).toBe(callsBefore);
    expect(memory.outcomes.get('dr-1')).toBeUndefined();
    expect(status.components().find((c) => c.name === 'emr')).toMatchObject({ ok: true, downtime: { until: '2026-03-01T03:00:00.000Z' } });

    clock.set(Date.parse('2026-03-01T03:00:00.000Z'));
    await pusher.runOnce();
    await emrGate.probed();
    expect(memory.calls).toBe(callsBefore + 1);
    await pusher.runOnce();
    expect(memory.outcomes.get('dr-1')?.map((o) => o.status)).toEqual(['SENT']);
    expect(await pusher.scanOnce()).toBe(1);
    expect(await stores.documents.get('dr-2')).toMatchObject({ state: 'queued' });
  });
});
