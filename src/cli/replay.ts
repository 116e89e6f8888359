// `emr-bridge replay <file|folder> --to URL …`: see src/replay/.
import { systemClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { runReplay } from '../replay/replay.ts';
import { UsageError, parse } from './args.ts';
import { print } from './output.ts';

export async function replayCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, {
    to: { type: 'string' },
    secret: { type: 'string', multiple: true },
    'key-id': { type: 'string' },
    'fresh-ids': { type: 'boolean' },
    concurrency: { type: 'string' },
    'admin-url': { type: 'string' },
    'admin-token': { type: 'string' },
  });
  if (positionals.length === 0 || !values.to) throw new UsageError('usage: replay <file|folder> --to URL [--secret S] [--key-id K] [--fresh-ids] [--concurrency N] [--admin-url U --admin-token T]');
  const config = loadConfig();
  const secrets = values.secret?.length ? values.secret : config.service.signingSecrets;
  const keyId = values['key-id'] ?? config.service.keyId;
  if (!secrets.length || !keyId) throw new UsageError('a signing secret (--secret or SERVICE_SIGNING_SECRETS) and a key id (--key-id or SERVICE_KEY_ID) are required');
  const concurrency = Number(values.concurrency ?? 4);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) throw new UsageError('--concurrency must be 1..64');
  const adminToken = values['admin-token'] ?? config.adminToken;
  const result = await runReplay({
    paths: positionals,
    to: values.to,
    secrets,
    keyId,
    freshIds: values['fresh-ids'] ?? false,
    concurrency,
    ...(values['admin-url'] ? { adminUrl: values['admin-url'] } : {}),
    ...(adminToken ? { adminToken } : {}),
    out: print,
    clock: systemClock,
  });
  return result.mismatches === 0 ? 0 : 1;
}
