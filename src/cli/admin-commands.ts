// `emr-bridge documents …`, `dead-letters …`, `quarantine …` and `downtime …`: list (a page at a time, filtered),
// show, retry, replay, apply and dismiss, and plan or end an EMR downtime, through the admin API of a running
// adapter (--admin-url, default http://127.0.0.1:$PORT; --admin-token, default ADMIN_TOKEN). A list prints the
// admin API's JSON, whose `nextCursor` is what --cursor takes to show the next page (null on the last one).
import { loadConfig } from '../config.ts';
import { UsageError, parse } from './args.ts';
import { SPECS } from './specs.ts';
import { adminClientFrom, report } from './admin-client.ts';
import { print } from './output.ts';

const paging = {
  limit: { type: 'string' },
  cursor: { type: 'string' },
  type: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
} as const;

const DOCUMENTS_USAGE =
  'usage: documents list [--status S] [--type lab_report|prescription] [--since T] [--until T] [--limit N] [--cursor C] | documents show <externalId> | documents retry <externalId>';
const DEAD_LETTERS_USAGE = [
  'usage: dead-letters list [--state dead|dismissed] [--type EVENT_TYPE] [--since T] [--until T] [--limit N] [--cursor C]',
  '       dead-letters replay <eventId> | dead-letters replay --all [--event-type T]',
  '       dead-letters dismiss <eventId> --reason R | dead-letters dismiss-mapping <entityType> <serviceId> --reason R',
  '       dead-letters replay-mapping <entityType> <serviceId>',
].join('\n');

const QUARANTINE_USAGE = [
  'usage: quarantine list [--state quarantined|applied|dismissed] [--type EVENT_TYPE] [--since T] [--until T] [--limit N] [--cursor C]',
  '       quarantine apply <eventId> | quarantine dismiss <eventId> --reason R',
].join('\n');
const DOWNTIME_USAGE = 'usage: downtime show | downtime start --until T --reason R | downtime end';

/** The list's query string from the flags given (the admin API checks the values and names a bad one). */
function listQuery(values: Record<string, string | boolean | undefined>, names: string[]): string {
  const q = new URLSearchParams();
  for (const name of names) {
    const v = values[name];
    if (typeof v === 'string') q.set(name, v);
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export async function documentsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPECS.documents);
  const admin = adminClientFrom(loadConfig(), values['admin-url'], values['admin-token']);
  const [verb, externalId] = positionals;
  if (verb === 'list') return report(await admin.call('GET', `/documents${listQuery(values, ['status', ...Object.keys(paging)])}`), print);
  if (verb === 'show' && externalId) return report(await admin.call('GET', `/documents/${encodeURIComponent(externalId)}`), print);
  if (verb === 'retry' && externalId) return report(await admin.call('POST', `/documents/${encodeURIComponent(externalId)}/retry`), print);
  throw new UsageError(DOCUMENTS_USAGE);
}

export async function deadLettersCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPECS['dead-letters']);
  const admin = adminClientFrom(loadConfig(), values['admin-url'], values['admin-token']);
  const [verb, first, second] = positionals;
  if (verb === 'list') return report(await admin.call('GET', `/dead-letters${listQuery(values, ['state', ...Object.keys(paging)])}`), print);
  if (verb === 'replay' && first) return report(await admin.call('POST', `/dead-letters/${encodeURIComponent(first)}/replay`), print);
  if (verb === 'replay' && values.all) {
    const body = values['event-type'] ? { eventType: values['event-type'] } : {};
    return report(await admin.call('POST', '/dead-letters/replay', body), print);
  }
  if (verb === 'dismiss' && first && values.reason !== undefined)
    return report(await admin.call('POST', `/dead-letters/${encodeURIComponent(first)}/dismiss`, { reason: values.reason }), print);
  if (verb === 'replay-mapping' && first && second)
    return report(await admin.call('POST', `/dead-letters/mappings/${encodeURIComponent(first)}/${encodeURIComponent(second)}/replay`), print);
  if (verb === 'dismiss-mapping' && first && second && values.reason !== undefined) {
    const path = `/dead-letters/mappings/${encodeURIComponent(first)}/${encodeURIComponent(second)}/dismiss`;
    return report(await admin.call('POST', path, { reason: values.reason }), print);
  }
  throw new UsageError(DEAD_LETTERS_USAGE);
}

export async function quarantineCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPECS.quarantine);
  const admin = adminClientFrom(loadConfig(), values['admin-url'], values['admin-token']);
  const [verb, eventId] = positionals;
  if (verb === 'list') return report(await admin.call('GET', `/quarantine${listQuery(values, ['state', ...Object.keys(paging)])}`), print);
  if (verb === 'apply' && eventId) return report(await admin.call('POST', `/quarantine/${encodeURIComponent(eventId)}/apply`), print);
  if (verb === 'dismiss' && eventId && values.reason !== undefined)
    return report(await admin.call('POST', `/quarantine/${encodeURIComponent(eventId)}/dismiss`, { reason: values.reason }), print);
  throw new UsageError(QUARANTINE_USAGE);
}

export async function downtimeCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPECS.downtime);
  const admin = adminClientFrom(loadConfig(), values['admin-url'], values['admin-token']);
  const [verb] = positionals;
  if (verb === 'show') return report(await admin.call('GET', '/emr/downtime'), print);
  if (verb === 'start' && values.until !== undefined && values.reason !== undefined)
    return report(await admin.call('POST', '/emr/downtime', { until: values.until, reason: values.reason }), print);
  if (verb === 'end') return report(await admin.call('DELETE', '/emr/downtime'), print);
  throw new UsageError(DOWNTIME_USAGE);
}
