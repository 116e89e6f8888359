// `emr-bridge simulator` and `emr-bridge fhir-server`: the bundled servers on their own, for QA and demos.
import { loadConfig } from '../config.ts';
import { fhirServerCliOptions } from './fhir-server-options.ts';
import { startFhirServer } from '../fhir-server/server.ts';
import { createLogger } from '../logger.ts';
import { startSimulatorServer } from '../simulator/server.ts';
import { parse, portOption, UsageError } from './args.ts';
import { SPECS } from './specs.ts';
import { createGatedStdout } from './output.ts';
import { onShutdown } from './signals.ts';

export async function simulatorCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, SPECS.simulator);
  if (values.host === '') throw new UsageError('--host must not be empty');
  // --host, else HOST (the container image sets 0.0.0.0), else loopback.
  const config = loadConfig({ HOST: values.host });
  const out = createGatedStdout();
  const logger = createLogger({ level: config.logLevel, destination: out.stream, name: 'simulator' });
  const dbPath = values.db ?? config.simulator.databasePath;
  const server = await startSimulatorServer({
    port: Number(portOption(values.port) ?? 4000),
    host: config.host,
    ...(dbPath ? { dbPath } : {}),
    logger,
  });
  const stopped = onShutdown(
    () => server.close(),
    (m) => logger.info(m),
  );
  out.announce(`listening on ${server.url}`);
  return stopped;
}

export async function fhirServerCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, SPECS['fhir-server']);
  // --host, else HOST (the container image sets 0.0.0.0), else loopback.
  const config = loadConfig({ HOST: values.host });
  const options = fhirServerCliOptions({ ...values, host: config.host });
  const out = createGatedStdout();
  const logger = createLogger({ level: config.logLevel, destination: out.stream, name: 'fhir-server' });
  const dataFile = values['data-file'];
  const server = await startFhirServer({
    port: Number(portOption(values.port) ?? 8103),
    host: options.host,
    ...(dataFile ? { dataFile } : {}),
    ...(options.auth ? { auth: options.auth } : {}),
    // What a vendor's EMR may lack, to see the adapter without it (the claims one by one).
    ...(values['no-transactions'] ? { transactions: false } : {}),
    ...(values['no-conditional-create'] ? { conditionalCreate: false } : {}),
    profile: options.profile,
    logger,
  });
  try {
    for (const client of options.clients) server.auth?.registerClient(client);
  } catch (err) {
    await server.close();
    throw new UsageError(`--client: ${(err as Error).message}`);
  }
  // Signal handlers before the first line: a script that reads it may stop us at once.
  const stopped = onShutdown(
    () => server.close(),
    (m) => logger.info(m),
  );
  // Scripts read the first line as `listening on <url>` and nothing more.
  out.announce(`listening on ${server.baseUrl}`);
  if (server.auth) logger.info({ tokenUrl: server.auth.tokenUrl, clients: options.clients.map((c) => c.clientId) }, 'SMART sign-in on');
  return stopped;
}
