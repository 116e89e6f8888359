// `npm run bench`: every benchmark, each a ratio against a baseline measured in the same run, printed as
// tables. Targets are checked here, never in timed tests (the machine is shared and noisy).
// `npm run bench -- receiver` runs one part. Parts in OPT_IN run only when named.
// receiver: wrk (a native load generator; set-up `apt-get install -y wrk`) against bare node:http, the
// design's floor and `emr-bridge serve` (./receiver-wrk.ts), then serve with the processor applying into the bundled
// FHIR server beside it, against serve parked, with the processor's drain rates (./receiver-applying.ts; skipped with
// BENCH_RECEIVER_PARKED_ONLY=1). receiver-node: the earlier Node-driven one, kept for its exact check of every
// acknowledged eventId. receiver-profile: serve's CPU profile under wrk (BENCH_PROFILE_APPLYING=1: the processor at work).
// receiver-postgres: serve on PostgreSQL (one and two replicas, fsync on) against serve on SQLite, under wrk
// (./receiver-postgres.ts). The processor part runs the same workload on PostgreSQL with one and two processors.
// hl7: the adapter on an HL7 v2 EMR (the bundled one) against a bare MLLP client, MDM documents, and memory
// over many 1 MB documents (./hl7.ts).
// sealing: patient data sealed at rest, on against off: serve under wrk and the processor's in-process workload (./sealing.ts).
// tracing: traces on (every trace sampled, exported to a local OTLP sink) against off (no endpoint): serve under wrk and
// the processor, in process and over HTTP (./tracing.ts); with BENCH_BEFORE, off against that checkout's serve too.
// emr-latency (opt-in, long): a backlog after an outage against the bundled FHIR server and HL7 EMR behind a latency proxy (./emr-latency.ts).
import { benchReceiver } from './receiver.ts';
import { benchReceiverPostgres } from './receiver-postgres.ts';
import { benchReceiverWrk } from './receiver-wrk.ts';
import { benchSimulatorDeliveries } from './simulator-deliveries.ts';
import { benchProcessor } from './processor.ts';
import { benchPusher } from './pusher.ts';
import { benchHl7 } from './hl7.ts';
import { benchSealing } from './sealing.ts';
import { benchTracing } from './tracing.ts';
import { WrkMissingError } from './wrk/run-wrk.ts';

type Bench = () => Promise<{ rows: Record<string, string | number>[]; ok?: boolean }>;

const benches: Record<string, Bench> = {
  receiver: benchReceiverWrk,
  'receiver-postgres': benchReceiverPostgres,
  'receiver-node': benchReceiver,
  'receiver-profile': async () => (await import('./profile-serve.ts')).profileServe({ applying: process.env.BENCH_PROFILE_APPLYING === '1' }),
  simulator: benchSimulatorDeliveries,
  processor: benchProcessor,
  pusher: benchPusher,
  'fhir-server': async () => (await import('./fhir-server.ts')).benchFhirServer(),
  hl7: benchHl7,
  sealing: benchSealing,
  tracing: benchTracing,
  'emr-latency': async () => (await import('./emr-latency.ts')).benchEmrLatency(),
};

const OPT_IN = new Set(['receiver-node', 'receiver-profile', 'emr-latency']);

const only = process.argv.slice(2);
const unknown = only.filter((name) => !(name in benches));
if (unknown.length) {
  process.stderr.write(`unknown part(s): ${unknown.join(', ')}; parts: ${Object.keys(benches).join(', ')}\n`);
  process.exit(2);
}
let failed = false;
for (const [name, run] of Object.entries(benches)) {
  if (only.length ? !only.includes(name) : OPT_IN.has(name)) continue;
  process.stdout.write(`\n## ${name}\n`);
  let result: Awaited<ReturnType<Bench>>;
  try {
    result = await run();
  } catch (err) {
    // wrk missing: this part fails, saying how to install it; the others still run. Anything else is thrown.
    if (!(err instanceof WrkMissingError)) throw err;
    process.stderr.write(`${name} FAILED: ${err.message}\n`);
    failed = true;
    continue;
  }
  console.table(result.rows);
  if (result.ok === false) failed = true;
}
process.exitCode = failed ? 1 : 0;
