// `emr-bridge documents …` and `emr-bridge dead-letters …`: list, show, retry and replay through the admin API
// of a running adapter (--admin-url, default http://127.0.0.1:$PORT; --admin-token, default ADMIN_TOKEN).
import { loadConfig } from '../config.ts';
import { UsageError, parse } from './args.ts';
import { adminClientFrom, report } from './admin-client.ts';
import { print } from './output.ts';

const common = { 'admin-url': { type: 'string' }, 'admin-token': { type: 'string' } } as const;

export async function documentsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...common, status: { type: 'string' } });
  const admin = adminClientFrom(loadConfig(), values['admin-url'], values['admin-token']);
  const [verb, externalId] = positionals;
  if (verb === 'list') {
    const q = values.status ? `?status=${encodeURIComponent(values.status)}` : '';
    return report(await admin.call('GET', `/documents${q}`), print);
  }
  if (verb === 'show' && externalId) return report(await admin.call('GET', `/documents/${encodeURIComponent(externalId)}`), print);
  if (verb === 'retry' && externalId) return report(await admin.call('POST', `/documents/${encodeURIComponent(externalId)}/retry`), print);
  throw new UsageError('usage: documents list [--status S] | documents show <externalId> | documents retry <externalId>');
}

export async function deadLettersCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { ...common, all: { type: 'boolean' }, 'event-type': { type: 'string' } });
  const admin = adminClientFrom(loadConfig(), values['admin-url'], values['admin-token']);
  const [verb, eventId] = positionals;
  if (verb === 'list') return report(await admin.call('GET', '/dead-letters'), print);
  if (verb === 'replay' && eventId) return report(await admin.call('POST', `/dead-letters/${encodeURIComponent(eventId)}/replay`), print);
  if (verb === 'replay' && values.all) {
    const body = values['event-type'] ? { eventType: values['event-type'] } : {};
    return report(await admin.call('POST', '/dead-letters/replay', body), print);
  }
  throw new UsageError('usage: dead-letters list | dead-letters replay <eventId> | dead-letters replay --all [--event-type T]');
}
