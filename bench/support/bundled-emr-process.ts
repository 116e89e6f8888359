// A bundled EMR in a process of its own, started with what `emr-bridge fhir-server` and `emr-bridge hl7-emr` do
// not take on their command line, for ../emr-latency.ts:
// - `fhir <options JSON>`: the FHIR server with those FhirServerOptions (`{"conditionalCreate": false}`, and
//   whatever option a version adds: a key this version does not know is passed on and ignored);
// - `hl7 <notify mllp://…>`: the HL7 EMR with its control API (/_emr/, read for its patients and appointments).
// Prints `mllp on <url>` (HL7) and then `listening on <http url>` (./child.ts waits for it); stops on SIGTERM.
// Run: node bin/run-ts.js bench/support/bundled-emr-process.ts fhir '{"conditionalCreate":false}'
import { type FhirServerOptions, startFhirServer } from '../../src/fhir-server/server.ts';
import { startHl7Emr } from '../../src/hl7-emr/server.ts';
import { silentLogger } from '../../src/logger.ts';

const [kind, arg] = process.argv.slice(2);
const logger = silentLogger();

async function start(): Promise<() => Promise<void>> {
  if (kind === 'fhir') {
    const options = JSON.parse(arg ?? '{}') as Partial<FhirServerOptions>;
    const server = await startFhirServer({ ...options, port: 0, host: '127.0.0.1', logger });
    process.stdout.write(`listening on ${server.baseUrl}\n`);
    return () => server.close();
  }
  if (kind === 'hl7' && arg) {
    const emr = await startHl7Emr({ port: 0, host: '127.0.0.1', notify: arg, controlPort: 0, logger });
    process.stdout.write(`mllp on ${emr.url}\nlistening on ${emr.controlUrl}\n`);
    return () => emr.close();
  }
  throw new Error('usage: bundled-emr-process.ts fhir [options JSON] | hl7 <notify mllp://host:port>');
}

const close = await start();
process.once('SIGTERM', () => void close().then(() => process.exit(0)));
