// The bundled HL7 EMR in a process of its own for ../emr-latency.ts, with its control API (/_emr/, read for its
// patients and appointments): `emr-bridge hl7-emr` prints its MLLP address first, and ./child.ts waits for an
// http:// one. Prints `mllp on <url>` and then `listening on <control url>`; stops on SIGTERM. Or the bundled FHIR
// server's vendor profile with master data of the bench's own (./vendor-bench.ts), which its command line does not
// take: prints `listening on <base url>`.
// Run: node bin/run-ts.js bench/support/bundled-emr-process.ts hl7 mllp://127.0.0.1:2575 [notify connections, default 1]
//      node bin/run-ts.js bench/support/bundled-emr-process.ts fhir-vendor <master data file>
import { startFhirServer } from '../../src/fhir-server/server.ts';
import { startHl7Emr } from '../../src/hl7-emr/server.ts';
import { silentLogger } from '../../src/logger.ts';

const [kind, arg, connections] = process.argv.slice(2);
const logger = silentLogger();

async function start(): Promise<() => Promise<void>> {
  if (kind === 'hl7' && arg) {
    const notifyConnections = connections ? Number(connections) : 1;
    const emr = await startHl7Emr({ port: 0, host: '127.0.0.1', notify: arg, notifyConnections, controlPort: 0, logger });
    process.stdout.write(`mllp on ${emr.url}\nlistening on ${emr.controlUrl}\n`);
    return () => emr.close();
  }
  if (kind === 'fhir-vendor' && arg) {
    const fhir = await startFhirServer({ port: 0, host: '127.0.0.1', profile: 'vendor', masterDataFile: arg, logger });
    process.stdout.write(`listening on ${fhir.baseUrl}\n`);
    return () => fhir.close();
  }
  throw new Error('usage: bundled-emr-process.ts hl7 <notify mllp://host:port> [notify connections] | fhir-vendor <master data file>');
}

const close = await start();
process.once('SIGTERM', () => void close().then(() => process.exit(0)));
