// `emr-bridge serve [--port N]`: the adapter (receiver, processor, pusher, admin API) in one process;
// with nothing configured, the bundled simulator and FHIR server start beside it, wired together.
import { loadConfig } from '../config.ts';
import { createLogger } from '../logger.ts';
import { startAdapter, type RunningAdapter } from '../runtime/adapter.ts';
import { parse, portOption } from './args.ts';
import { createGatedStdout, print } from './output.ts';
import { onShutdown } from './signals.ts';

export async function serveCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, { port: { type: 'string' }, host: { type: 'string' } });
  const config = loadConfig({ PORT: portOption(values.port), HOST: values.host });
  const out = createGatedStdout();
  const logger = createLogger({ level: config.logLevel, destination: out.stream });
  const adapter = await startAdapter({ config, logger });
  out.announce(`listening on ${adapter.url}`);
  printBanner(adapter, config.dataDir);
  return onShutdown(() => adapter.close(), (m) => logger.info(m));
}

function printBanner(a: RunningAdapter, dataDir: string): void {
  print(`  adapter        ${a.url}  (webhooks ${a.webhookUrl}, admin ${a.url}/admin, metrics ${a.url}/metrics)`);
  print(`  service        ${a.serviceUrl}${a.clinicId ? '  (bundled simulator)' : ''}`);
  if (a.fhirBaseUrl) print(`  FHIR R4 EMR    ${a.fhirBaseUrl}`);
  print(`  data folder    ${dataDir}`);
  if (!a.clinicId) return;
  print(`  admin token    ${a.adminToken}  (zero-configuration demo; set ADMIN_TOKEN in production)`);
  print('');
  print('  Try it: create an appointment in the simulator, then see it arrive in FHIR:');
  print(
    `    curl -s -X POST ${a.serviceUrl}/_sim/appointments -H 'content-type: application/json' -d '{"clinicId":"${a.clinicId}"}'`,
  );
  print(`    sleep 1; npx emr-bridge fhir-get 'Appointment?_count=10'   (the FHIR server wants a SMART sign-in, as a hospital's does)`);
  print('  Replay the QA samples (in another terminal): npx emr-bridge replay samples --fresh-ids');
  print('');
}
