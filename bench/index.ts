// `npm run bench`: every benchmark, each a ratio against a baseline measured in the same run, printed as
// tables. Targets are checked here, never in timed tests (the machine is shared and noisy).
// `npm run bench -- receiver` runs one part.
import { benchReceiver } from './receiver.ts';
import { benchSimulatorDeliveries } from './simulator-deliveries.ts';
import { benchProcessor } from './processor.ts';
import { benchPusher } from './pusher.ts';

type Bench = () => Promise<{ rows: Record<string, string | number>[]; ok?: boolean }>;

const benches: Record<string, Bench> = {
  receiver: benchReceiver,
  simulator: benchSimulatorDeliveries,
  processor: benchProcessor,
  pusher: benchPusher,
  'fhir-server': async () => (await import('./fhir-server.ts')).benchFhirServer(),
};

const only = process.argv.slice(2);
let failed = false;
for (const [name, run] of Object.entries(benches)) {
  if (only.length && !only.includes(name)) continue;
  process.stdout.write(`\n## ${name}\n`);
  const result = await run();
  console.table(result.rows);
  if (result.ok === false) failed = true;
}
process.exitCode = failed ? 1 : 0;
