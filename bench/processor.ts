// Processor benchmark: events applied per second (2,000 appointment events over 200 appointments,
// created then rescheduled and so on), against the in-process EMR port (the baseline: the processor's
// own cost) and against the bundled FHIR server in another process (the real adapter path).
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../src/clock.ts';
import { parseConfig } from '../src/config.ts';
import { openDatabase } from '../src/database/open.ts';
import { createFhirEmr } from '../src/emr/fhir/index.ts';
import { createMemoryEmr } from '../src/emr/memory/index.ts';
import type { EmrPort } from '../src/emr/port.ts';
import { silentLogger } from '../src/logger.ts';
import { ADAPTER_MIGRATIONS } from '../src/paths.ts';
import { createProcessor } from '../src/processor/index.ts';
import { startChild } from '../test/support/child.ts';
import { appointmentEvent } from '../test/support/processor-fixture.ts';

const APPOINTMENTS = 200;
const EVENTS_PER = 10;
const TYPES = ['appointment.created', 'appointment.rescheduled', 'appointment.payment_updated'];

async function measure(emr: EmrPort, dir: string, name: string) {
  const db = openDatabase({ path: join(dir, `${name}.db`), migrationsDir: ADAPTER_MIGRATIONS });
  const insert = db.prepare('INSERT INTO inbox_events (event_id, event_type, headers, body, received_at) VALUES (?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let e = 0; e < EVENTS_PER; e++)
      for (let a = 0; a < APPOINTMENTS; a++) {
        const body: Record<string, unknown> = { ...appointmentEvent({ serviceId: `apt_${a}`, eventType: TYPES[Math.min(e, 2)]!, occurredAt: new Date(Date.UTC(2026, 0, 1, 0, e)).toISOString(), startsAt: new Date(Date.UTC(2026, 1, 1, e)).toISOString() }), eventId: randomUUID() };
        insert.run(body.eventId, String(body.eventType), '{}', Buffer.from(JSON.stringify(body)), systemClock.now());
      }
  })();
  const processor = createProcessor({
    db,
    clock: systemClock,
    logger: silentLogger(),
    emr,
    config: parseConfig({ PROCESSOR_CONCURRENCY: '8' }),
    serviceClient: { putMapping: async () => undefined },
    documentEvents: { apply: async () => undefined },
  });
  const t0 = performance.now();
  let applied = 0;
  while (processor.depth() > 0) applied += await processor.runOnce();
  const seconds = (performance.now() - t0) / 1000;
  db.close();
  return { applied, seconds, rate: applied / seconds };
}

export async function benchProcessor(): Promise<{ rows: Record<string, string | number>[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-bench-processor-'));
  const fhir = await startChild(['bin/emr-bridge.js', 'fhir-server', '--port', '0'], { env: { LOG_LEVEL: 'silent' } });
  try {
    const memory = await measure(createMemoryEmr(), dir, 'memory');
    const fhirEmr = createFhirEmr({ baseUrl: fhir.url, identifierSystem: 'urn:emr-bridge:service', timeoutMs: 10_000, labReportTypeCodes: [], prescriptionTypeCodes: [], auth: { mode: 'none' }, maxContentBytes: 1024 * 1024, clock: systemClock, logger: silentLogger() });
    const real = await measure(fhirEmr, dir, 'fhir');
    await fhirEmr.close();
    const row = (emr: string, r: { applied: number; seconds: number; rate: number }) => ({ emr, events: r.applied, seconds: r.seconds.toFixed(2), 'events applied/s': Math.round(r.rate) });
    return {
      rows: [
        row('in-process EMR port (baseline)', memory),
        row('bundled FHIR server over HTTP', real),
        { emr: 'ratio FHIR/in-process', events: '', seconds: '', 'events applied/s': (real.rate / memory.rate).toFixed(2) },
      ],
    };
  } finally {
    await fhir.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
