// `emr-bridge hl7-emr`: the bundled HL7 v2 EMR on its own (an interface engine stand-in for QA, demos and
// the adapter's HL7 tests). Prints `listening on mllp://…` first, then logs; stops on SIGTERM.
import { loadConfig } from '../config.ts';
import { ValidationError } from '../errors.ts';
import { MAX_NOTIFY_CONNECTIONS } from '../hl7-emr/notifier.ts';
import { parseMllpUrl, startHl7Emr } from '../hl7-emr/server.ts';
import { createLogger } from '../logger.ts';
import { parse, portOption, UsageError, wholeNumberOption } from './args.ts';
import { createGatedStdout } from './output.ts';
import { onShutdown } from './signals.ts';
import { SPECS } from './specs.ts';

function notifyOption(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    parseMllpUrl(value);
  } catch (err) {
    if (err instanceof ValidationError) throw new UsageError(`--notify must be mllp://host:port, got ${value}`);
    throw err;
  }
  return value;
}

export async function hl7EmrCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, SPECS['hl7-emr']);
  if (values.host === '') throw new UsageError('--host must not be empty');
  const port = Number(portOption(values.port) ?? 6661);
  const control = wholeNumberOption('control-port', values['control-port'], 0, 65535);
  const notify = notifyOption(values.notify);
  const connections = wholeNumberOption('notify-connections', values['notify-connections'], 1, MAX_NOTIFY_CONNECTIONS);
  // --host, else HOST, else loopback; HL7_ASSIGNING_AUTHORITY read as the adapter reads it.
  const config = loadConfig({ HOST: values.host, EMR_PROTOCOL: 'hl7v2' }, 'tools');
  const assigningAuthority = config.emr.protocol === 'hl7v2' ? config.emr.settings.assigningAuthority : 'SERVICE';
  const out = createGatedStdout();
  const logger = createLogger({ level: config.logLevel, destination: out.stream, name: 'hl7-emr' });
  const dataFile = values['data-file'];
  const emr = await startHl7Emr({
    port,
    host: config.host,
    assigningAuthority,
    logger,
    ...(notify ? { notify } : {}),
    ...(connections !== undefined ? { notifyConnections: connections } : {}),
    ...(control !== undefined ? { controlPort: control } : {}),
    ...(dataFile ? { dataFile } : {}),
  });
  // Signal handlers before the first line: a script that reads it may stop us at once.
  const stopped = onShutdown(
    () => emr.close(),
    (m) => logger.info(m),
  );
  out.announce(`listening on ${emr.url}`);
  logger.info({ notify: notify ?? null, notifyConnections: connections ?? 1, controlUrl: emr.controlUrl ?? null, assigningAuthority }, 'HL7 EMR ready');
  return stopped;
}
