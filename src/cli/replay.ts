// `emr-bridge replay <file|folder> [--to URL] …`: see src/replay/. Without flags it replays at the adapter
// that the settings (or a zero-configuration adapter's bundled.json) name; beside the vendor demo, whose adapter
// books into the EMR's Slots, with the samples' doctors mapped and their times on free Slots (./replay-slots.ts).
// `.hl7` samples go over MLLP to the adapter's HL7 listener instead (./replay-hl7.ts), after the JSON ones.
import { systemClock } from '../clock.ts';
import { type Config, loadConfig } from '../config.ts';
import type { ClientTls } from '../emr/hl7v2/mllp/open-socket.ts';
import { runReplay } from '../replay/replay.ts';
import { adminClientFrom } from './admin-client.ts';
import { besideVendorDemo, vendorDemoSlots } from './replay-slots.ts';
import { UsageError, parse, type Values } from './args.ts';
import { SPECS } from './specs.ts';
import { cliDefaults } from './defaults.ts';
import { checkMllpUrl, clientTlsOf, defaultMllpTarget, replayHl7, splitSamplePaths } from './replay-hl7.ts';
import { simulatorClock } from './simulator-clock.ts';
import { print } from './output.ts';

/** How long an `.hl7` sample waits for its acknowledgment when the settings do not say (HL7_ACK_TIMEOUT_MS's default). */
const ACK_TIMEOUT_MS = 30_000;

export async function replayCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPECS.replay);
  if (positionals.length === 0)
    throw new UsageError(
      'usage: replay <file|folder> [--to URL] [--secret S] [--key-id K] [--fresh-ids] [--concurrency N] [--admin-url U --admin-token T] [--mllp URL]',
    );
  const config = loadConfig();
  const { hl7, json } = splitSamplePaths(positionals);
  // Settled before anything is sent, so that a wrong --mllp does not follow a JSON replay already done.
  const mllp = hl7.length ? mllpTarget(values.mllp, config) : undefined;
  // With nowhere to send them, a .hl7 file named on the command line is a mistake; those found in a folder
  // (`replay samples` beside a FHIR adapter) are left out, with a line saying so.
  if (!mllp && hl7.some((f) => f.named))
    throw new UsageError(
      ".hl7 samples go over MLLP: give --mllp mllp://host:port, or run with EMR_PROTOCOL=hl7v2 and HL7_LISTEN_PORT (not 0) to reach the adapter's listener",
    );
  let ok = true;
  // Only .hl7 samples: no webhook is signed, so no secret is needed.
  if (json.length || !hl7.length) ok = (await replayJson(values, json.length ? json : positionals, config)) && ok;
  if (mllp) ok = (await replayHl7({ files: hl7.map((f) => f.path), ...mllp, out: print, clock: systemClock })).failures === 0 && ok;
  else if (hl7.length) print(`${hl7.length} .hl7 samples left out: no MLLP listener to send them to (--mllp, or EMR_PROTOCOL=hl7v2)`);
  return ok ? 0 : 1;
}

/** --mllp, else the adapter's own listener when the settings run the HL7 v2 module; undefined: neither. */
function mllpTarget(given: string | undefined, config: Config): { url: string; tls?: ClientTls; ackTimeoutMs: number } | undefined {
  if (given === undefined) return defaultMllpTarget(config);
  const endpoint = checkMllpUrl(given);
  return {
    url: given,
    ...(endpoint.secure ? { tls: clientTlsOf(config) } : {}),
    ackTimeoutMs: config.emr.protocol === 'hl7v2' ? config.emr.settings.ackTimeoutMs : ACK_TIMEOUT_MS,
  };
}

async function replayJson(values: Values<(typeof SPECS.replay)['options']>, paths: string[], config: Config): Promise<boolean> {
  const defaults = cliDefaults(config);
  const secrets = values.secret?.length ? values.secret : defaults.secrets;
  const keyId = values['key-id'] ?? defaults.keyId;
  if (!secrets.length || !keyId)
    throw new UsageError('a signing secret (--secret or SERVICE_SIGNING_SECRETS) and a key id (--key-id or SERVICE_KEY_ID) are required');
  // How many entities go at once: one entity's events always go one after another (src/replay/entity-chains.ts).
  const concurrency = Number(values.concurrency ?? 4);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) throw new UsageError('--concurrency must be 1..64');
  const adminToken = values['admin-token'] ?? defaults.adminToken;
  if (values.to !== undefined && !URL.canParse(values.to)) throw new UsageError(`--to must be a URL, got ${values.to}`);
  const to = values.to ?? defaults.webhookUrl;
  // The bundled adapter runs on the simulator's clock, which QA may have moved: sign with that time.
  const clock = !values.to && defaults.serviceUrl ? await simulatorClock(defaults.serviceUrl) : systemClock;
  // The admin API as given, else beside the receiver --to names, else the adapter the defaults name.
  const adminUrl = values['admin-url'] ?? (values.to ? new URL(values.to).origin : defaults.adminUrl);
  const slots =
    !values.to && defaults.fhirBaseUrl && besideVendorDemo(config)
      ? await vendorDemoSlots(config, { admin: adminClientFrom(config, adminUrl, adminToken), fhirBaseUrl: defaults.fhirBaseUrl, clock })
      : undefined;
  try {
    const result = await runReplay({
      paths,
      to,
      secrets,
      keyId,
      freshIds: values['fresh-ids'] ?? false,
      concurrency,
      adminUrl,
      ...(adminToken ? { adminToken } : {}),
      out: print,
      clock,
      ...(slots ? { slots } : {}),
    });
    return result.mismatches === 0;
  } finally {
    await slots?.close();
  }
}
