// Pusher benchmark: documents pushed per second with 100 KB PDFs against the simulator (another process),
// through the durable outbox, against a baseline of the same requests posted straight at the simulator
// with undici in the same run (no outbox, no checks).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { systemClock } from '../src/clock.ts';
import { parseConfig } from '../src/config.ts';
import { openDatabase } from '../src/database/open.ts';
import { createMemoryEmr } from '../src/emr/memory/index.ts';
import { silentLogger } from '../src/logger.ts';
import { requestJson } from '../src/http/json-request.ts';
import { ADAPTER_MIGRATIONS } from '../src/paths.ts';
import { createPusher } from '../src/pusher/index.ts';
import { createServiceClient } from '../src/service-client/client.ts';
import { startChild } from './support/child.ts';

const DOCUMENTS = 300;
const PDF_100KB = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.alloc(100 * 1024 - 9, 0x20)]).toString('base64');

const body = (externalId: string) => ({
  externalId,
  patientPhone: '+15550500000',
  patientName: 'Bench Patient',
  label: 'Bench report',
  file: { base64: PDF_100KB, filename: 'bench.pdf' },
});

export async function benchPusher(): Promise<{ rows: Record<string, string | number>[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-bench-pusher-'));
  const sim = await startChild(['bin/emr-bridge.js', 'simulator', '--port', '0'], { env: { LOG_LEVEL: 'silent', SIMULATOR_DATABASE_PATH: '' } });
  try {
    const clinicId = (await requestJson<{ clinicId: string }>('POST', `${sim.url}/_sim/clinics`, { quietHours: { start: '00:00', end: '00:00' } })).body
      .clinicId;
    const key = (await requestJson<{ key: string }>('POST', `${sim.url}/_sim/keys`, { clinicId })).body.key;

    let t0 = performance.now();
    const queue = Array.from({ length: DOCUMENTS }, (_, i) => `raw-${i}`);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let id = queue.shift(); id; id = queue.shift()) {
          const res = await request(`${sim.url}/integration/v1/lab-reports`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify(body(id)),
          });
          await res.body.dump();
        }
      }),
    );
    const raw = DOCUMENTS / ((performance.now() - t0) / 1000);

    const db = openDatabase({ path: join(dir, 'adapter.db'), migrationsDir: ADAPTER_MIGRATIONS });
    const serviceClient = createServiceClient({ baseUrl: sim.url, apiKey: key, timeoutMs: 10_000, clock: systemClock });
    const pusher = createPusher({ db, clock: systemClock, logger: silentLogger(), emr: createMemoryEmr(), serviceClient, config: parseConfig({}) });
    t0 = performance.now();
    for (let i = 0; i < DOCUMENTS; i++) pusher.enqueue('lab_report', body(`outbox-${i}`));
    while (pusher.outbox.list('queued', 1).length) await pusher.runOnce();
    const seconds = (performance.now() - t0) / 1000;
    const sent = pusher.outbox.list('SENT', DOCUMENTS * 2).length;
    await serviceClient.close();
    db.close();
    const viaOutbox = sent / seconds;
    return {
      rows: [
        { path: 'straight POSTs with undici (baseline)', documents: DOCUMENTS, 'documents/s': Math.round(raw) },
        { path: 'pusher: checks + durable outbox + follow-up', documents: sent, 'documents/s': Math.round(viaOutbox) },
        { path: 'ratio pusher/baseline', documents: '', 'documents/s': (viaOutbox / raw).toFixed(2) },
      ],
    };
  } finally {
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
