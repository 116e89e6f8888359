// `emr-bridge replay <file|folder> [--to URL] …`: see src/replay/. Without flags it replays at the adapter
// that the settings (or a zero-configuration adapter's bundled.json) name.
import { systemClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { runReplay } from '../replay/replay.ts';
import { UsageError, parse } from './args.ts';
import { SPECS } from './specs.ts';
import { cliDefaults } from './defaults.ts';
import { simulatorClock } from './simulator-clock.ts';
import { print } from './output.ts';

export async function replayCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPECS.replay);
  if (positionals.length === 0)
    throw new UsageError('usage: replay <file|folder> [--to URL] [--secret S] [--key-id K] [--fresh-ids] [--concurrency N] [--admin-url U --admin-token T]');
  const defaults = cliDefaults(loadConfig());
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
  const result = await runReplay({
    paths: positionals,
    to,
    secrets,
    keyId,
    freshIds: values['fresh-ids'] ?? false,
    concurrency,
    // The admin API as given, else beside the receiver --to names, else the adapter the defaults name.
    adminUrl: values['admin-url'] ?? (values.to ? new URL(values.to).origin : defaults.adminUrl),
    ...(adminToken ? { adminToken } : {}),
    out: print,
    clock,
  });
  return result.mismatches === 0 ? 0 : 1;
}
