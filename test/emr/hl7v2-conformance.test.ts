// The HL7 v2 module's port against the bundled HL7 EMR over loopback MLLP, with the conformance suite's
// pushed shape: claims answered with handles, ids named by the EMR's ADT and SIU feeds, documents pushed as
// MDM^T02, whatever the adapter failed to store sent again by the EMR.
import { createServer, type Server } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { createHl7Emr, type Hl7Emr } from '../../src/emr/hl7v2/index.ts';
import { joinName } from '../../src/emr/hl7v2/messages/names.ts';
import { emrSettings } from '../../src/emr/settings.ts';
import { startHl7Emr } from '../../src/hl7-emr/server.ts';
import { silentLogger } from '../../src/logger.ts';
import { waitFor } from '../support/wait.ts';
import { describePushedEmrPort, type PushedEmrHarness } from './conformance/describe-pushed-emr-port.ts';

const freePort = () =>
  new Promise<number>((resolve) => {
    const s: Server = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

/** An HL7 DTM with its offset (`20260302100000+0100`) as the ISO instant it is. */
function isoOf(dtm: string): string {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?([+-]\d{2})(\d{2})$/.exec(dtm);
  if (!m) throw new Error(`not an HL7 time with an offset: ${dtm}`);
  return new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6] ?? '00'}${m[7]}:${m[8]}`).toISOString();
}

async function hl7Harness(): Promise<PushedEmrHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-hl7-conformance-'));
  const listenPort = await freePort();
  const emr = await startHl7Emr({ port: 0, notify: `mllp://127.0.0.1:${listenPort}`, retry: { baseMs: 50, maxMs: 200 }, logger: silentLogger() });
  const config = parseConfig({
    DATA_DIR: dir,
    EMR_PROTOCOL: 'hl7v2',
    HL7_SEND_URL: emr.url,
    HL7_LISTEN_PORT: String(listenPort),
    HL7_ACK_TIMEOUT_MS: '2000',
    SERVICE_BASE_URL: 'bundled',
  });
  const settings = emrSettings(config.emr, 'hl7v2');
  const port: Hl7Emr = await createHl7Emr({ settings, sendUrl: () => emr.url, tls: {}, clock: systemClock, logger: silentLogger() });
  const patientByMrn = (mrn: string) => emr.patients().find((p) => p.mrn === mrn);
  return {
    emr: port,
    // The EMR's notifications go out one at a time, retried until acknowledged: settled once none waits, or, while
    // the adapter refuses them, after a few of the EMR's retries (50-200 ms apart).
    settle: () =>
      waitFor(() => (emr.pendingNotifications() === 0 ? true : undefined), 1_500, 20).then(
        () => undefined,
        () => undefined,
      ),
    async countByServiceId(kind, serviceId) {
      if (kind === 'patient') return emr.patients().filter((p) => p.serviceId === serviceId).length;
      if (kind === 'appointment') return emr.appointments().filter((a) => a.serviceId === serviceId).length;
      // Practitioners and locations are the EMR's own: the port names them in AIP-3 and AIL-3, never registers them.
      return 1;
    },
    async readPatient(mrn) {
      const p = patientByMrn(mrn);
      // The EMR keeps PID-5 as family^given; the suite speaks the service's one-string name.
      const [family = '', given = ''] = p?.name.split('^') ?? [];
      return p && { name: joinName({ given, family }), phones: p.phone ? [p.phone] : [], serviceIds: [p.serviceId] };
    },
    async readAppointment(fillerId) {
      const a = emr.appointments().find((x) => x.fillerId === fillerId);
      return a && { startsAt: isoOf(a.start), cancelled: a.cancelled, serviceStatus: a.status };
    },
    async fileDocument(seed) {
      return emr.fileDocument({
        patientServiceId: seed.patientServiceId,
        documentType: seed.documentType,
        label: seed.label,
        filename: seed.filename,
        pdf: Buffer.from(seed.bytes),
      });
    },
    async unreachable() {
      const closed = await freePort();
      const failing = await createHl7Emr({
        settings: { ...settings, listen: { host: '127.0.0.1', port: 0 } },
        sendUrl: () => `mllp://127.0.0.1:${closed}`,
        tls: {},
        clock: systemClock,
        logger: silentLogger(),
      });
      await failing.start!({
        state: {
          get: async () => undefined,
          getMany: async () => new Map(),
          put: async () => undefined,
          putMany: async () => undefined,
          putNew: async () => true,
          pruneBefore: async () => 0,
        },
        recordIdentified: async () => undefined,
        documentPushed: async () => undefined,
        documentCancelled: async () => 'unknown',
      });
      return { emr: failing, end: () => failing.close() };
    },
    async close() {
      await port.close();
      await emr.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describePushedEmrPort('the HL7 v2 module against the bundled HL7 EMR', hl7Harness);
