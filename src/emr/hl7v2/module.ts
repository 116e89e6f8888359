// The HL7 v2 EMR module (EMR_PROTOCOL=hl7v2): its settings are HL7_* (./settings.ts); it reads the TLS files
// those name before anything runs, opens the adapter's MLLP listener, and in zero-configuration mode (or with
// HL7_SEND_URL=bundled) starts the bundled HL7 EMR (src/hl7-emr/) with its feeds pointed at that listener.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startHl7Emr } from '../../hl7-emr/server.ts';
import { ConfigError } from '../../errors.ts';
import type { EmrModule } from '../module.ts';
import { createHl7Emr, type Hl7Tls } from './index.ts';
import type { Hl7Settings } from './settings.ts';

/** The bundled HL7 EMR listens two ports above the adapter (the simulator takes the one between), its control API three. */
const BUNDLED_PORT_OFFSET = 2;
const CONTROL_PORT_OFFSET = 3;

/** HL7_TLS_*: each file read now, so that one that cannot be read stops start-up naming its setting. */
function readTls(settings: Hl7Settings): Hl7Tls {
  const problems: string[] = [];
  const read = (setting: string, path: string | undefined): Buffer | undefined => {
    if (!path) return undefined;
    try {
      return readFileSync(path);
    } catch (err) {
      problems.push(`${setting}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      return undefined;
    }
  };
  const tls = {
    cert: read('HL7_TLS_CERT_PATH', settings.tls.certPath),
    key: read('HL7_TLS_KEY_PATH', settings.tls.keyPath),
    ca: read('HL7_TLS_CA_PATH', settings.tls.caPath),
  };
  if (problems.length) throw new ConfigError(problems);
  return Object.fromEntries(Object.entries(tls).filter(([, v]) => v !== undefined)) as Hl7Tls;
}

export const hl7v2Module: EmrModule<'hl7v2'> = {
  protocol: 'hl7v2',
  prepare: async (settings) => readTls(settings),
  async start({ settings, bundled, prepared, host, clock }) {
    const logger = host.logger;
    const tls = (prepared as Hl7Tls | undefined) ?? readTls(settings);
    // The bundled EMR is told where the listener is, so the listener comes first; the port sends to the EMR's
    // address, known once it listens.
    let stand: Awaited<ReturnType<typeof startHl7Emr>> | undefined;
    const port = await createHl7Emr({
      settings,
      sendUrl: () => settings.sendUrl ?? stand!.url,
      tls,
      clock,
      logger: logger.child({ component: 'emr' }),
    });
    try {
      if (bundled)
        stand = await startHl7Emr({
          host: host.host,
          port: host.port === 0 ? 0 : host.port + BUNDLED_PORT_OFFSET,
          notify: port.listenerUrl,
          dataFile: join(host.dataDir, 'hl7-emr.jsonl'),
          // Its /_emr/ control API beside it, for the demo and QA (file a document, see what it holds).
          controlPort: host.port === 0 ? 0 : host.port + CONTROL_PORT_OFFSET,
          assigningAuthority: settings.assigningAuthority,
          documentTypeCodes: { labReport: settings.labReportTypes[0]!, prescription: settings.prescriptionTypes[0]! },
          clock,
          logger: logger.child({ component: 'hl7-emr' }),
        });
    } catch (err) {
      await port.close();
      throw err;
    }
    const running = port;
    const address = settings.sendUrl ?? stand!.url;
    return {
      port: running,
      routers: [],
      summary: {
        title: 'HL7 v2 EMR',
        address,
        detail: `${bundled ? 'bundled HL7 EMR' : 'real'}, ${settings.sendConnections > 1 ? `${settings.sendConnections} links, ` : ''}listener ${running.listenerUrl}`,
        ...(bundled ? { standIn: 'HL7 EMR' } : {}),
        ...(stand?.controlUrl
          ? {
              tryIt: [
                `see it arrive in the bundled HL7 EMR: curl -s ${stand.controlUrl}/_emr/appointments`,
                `file a lab report there for a patient: curl -s -X POST ${stand.controlUrl}/_emr/documents -H 'content-type: application/json' -d '{"patientServiceId":"<pat_…>","documentType":"lab_report","label":"Lipid panel"}'`,
              ],
            }
          : {}),
      },
      async close() {
        await running.close();
        await stand?.close();
      },
    };
  },
};
