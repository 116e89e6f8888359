// `emr-bridge serve [--port N]`: the adapter (receiver, processor, pusher, admin API) in one process;
// with nothing configured, the bundled simulator and FHIR server start beside it, wired together.
import { loadConfig, type Config } from '../config.ts';
import type { EmrSummary } from '../emr/index.ts';
import { bundledStatePath } from '../runtime/bundled-state.ts';
import { createLogger } from '../logger.ts';
import { startAdapter, type RunningAdapter } from '../runtime/adapter.ts';
import { parse, portOption } from './args.ts';
import { SPECS } from './specs.ts';
import { createGatedStdout, print } from './output.ts';
import { onShutdown } from './signals.ts';

export async function serveCommand(argv: string[]): Promise<number> {
  const { values } = parse(argv, SPECS.serve);
  const config = loadConfig({ PORT: portOption(values.port), HOST: values.host });
  const out = createGatedStdout();
  const logger = createLogger({ level: config.logLevel, destination: out.stream });
  const adapter = await startAdapter({ config, logger });
  // Signal handlers before the first line: a script that reads it may stop us at once.
  const stopped = onShutdown(
    () => adapter.close(),
    (m) => logger.info(m),
  );
  out.announce(`listening on ${adapter.url}`);
  printBanner(adapter, config);
  return stopped;
}

/** The admin token as the banner shows it: enough to tell which one it is, never the whole of it. */
export const maskToken = (token: string): string => `${token.slice(0, 4)}…${'*'.repeat(8)}`;

/** What the banner shows of a running adapter (RunningAdapter has it all). */
export interface BannerView {
  url: string;
  adminUrl: string;
  webhookUrl: string;
  adminToken: string;
  serviceUrl: string;
  /** The EMR as its module describes it (absent for an EMR passed in). */
  emr?: EmrSummary;
  clinicId?: string;
  sealedUnder?: string;
}

/** Where the data keys came from, and so whether patient data is sealed at rest (docs/data-at-rest.md). */
function dataAtRestLine(a: BannerView, config: Config): string {
  const { source } = config.dataKeys;
  if (a.sealedUnder) {
    const from =
      source.kind === 'path'
        ? 'DATA_KEYS_PATH'
        : source.kind === 'command'
          ? 'DATA_KEYS_COMMAND'
          : `generated, in ${source.kind === 'generated' ? source.path : '?'}`;
    return `  data at rest   sealed under data key ${a.sealedUnder}  (${from})`;
  }
  return `  data at rest   IN CLEAR  (${config.dataKeys.clearBecause ?? 'DATA_ENCRYPTION=off'})`;
}

/** Where spans go (the URL without its query: the key is in the headers, never shown), or that there are none. */
function tracesLine(config: Config): string {
  const t = config.tracing;
  if (!t) return '  traces         off  (no OTEL_EXPORTER_OTLP_ENDPOINT)';
  const url = new URL(t.url);
  const ratio = t.sampler.name.endsWith('traceidratio') ? ` ${t.sampler.ratio}` : '';
  return `  traces         ${url.origin}${url.pathname}  (${t.protocol}, ${t.sampler.name}${ratio}, service.name ${t.serviceName})`;
}

const WILDCARDS = new Set(['0.0.0.0', '::']);
const portOf = (url: string): string => new URL(url).port || '80';

/**
 * What a wildcard bind (HOST=0.0.0.0, as in the image) means for a client: the URLs above are loopback ones,
 * right on this machine only (in a container: inside it), while the listeners take connections on every
 * interface, on these ports. Nothing for a bind to one address: its URLs already say where it is.
 */
function interfaceLines(a: BannerView, config: Config): string[] {
  const listeners: { host: string; port: string; what: string }[] = [{ host: config.host, port: portOf(a.url), what: 'adapter' }];
  if (a.adminUrl !== a.url) listeners.push({ host: config.admin?.host ?? config.host, port: portOf(a.adminUrl), what: 'admin API' });
  if (config.bundled.service) listeners.push({ host: config.host, port: portOf(a.serviceUrl), what: 'simulator' });
  if (config.bundled.emr && a.emr?.address) listeners.push({ host: config.host, port: portOf(a.emr.address), what: a.emr.standIn ?? a.emr.title });
  const wide = listeners.filter((l) => WILDCARDS.has(l.host));
  if (wide.length === 0) return [];
  const hosts = [...new Set(wide.map((l) => l.host))].join(' and ');
  return [
    `  interfaces     all (${hosts}): ${wide.length === 1 ? 'port' : 'ports'} ${wide.map((l) => `${l.port} (${l.what})`).join(', ')}`,
    '                 127.0.0.1 above reaches them from this machine only (in a container: from inside it); from',
    "                 elsewhere use this machine's name or address (for a container: the host port published for each)",
  ];
}

/** The human banner after the first line (which stays `listening on <url>`: scripts read it). */
export function bannerLines(a: BannerView, config: Config): string[] {
  const part = (bundled: boolean) => (bundled ? 'bundled' : 'real');
  const lines = [
    `  adapter        ${a.url}  (webhooks ${a.webhookUrl})`,
    `  admin API      ${a.adminUrl}/admin  (metrics ${a.adminUrl}/metrics)`,
    `  service        ${a.serviceUrl}  (${part(config.bundled.service)}${config.bundled.service ? ' simulator' : ''})`,
  ];
  if (a.emr) lines.push(`  ${a.emr.title.padEnd(14)} ${a.emr.address}  (${a.emr.detail})`);
  lines.push(...interfaceLines(a, config));
  lines.push(`  data folder    ${config.dataDir}`);
  lines.push(dataAtRestLine(a, config));
  lines.push(tracesLine(config));
  lines.push(`  admin token    ${maskToken(a.adminToken)}  (${config.adminToken ? 'ADMIN_TOKEN' : `generated, in ${bundledStatePath(config.dataDir)}`})`);
  if (!a.clinicId) return lines;
  lines.push(
    '',
    '  Try it: create an appointment in the simulator, then see it arrive in the EMR:',
    `    curl -s -X POST ${a.serviceUrl}/_sim/appointments -H 'content-type: application/json' -d '{"clinicId":"${a.clinicId}"}'`,
    ...(a.emr?.tryIt ?? []).map((line) => `    ${line}`),
    '  Replay the QA samples (in another terminal): npx emr-bridge replay samples --fresh-ids',
    '',
  );
  return lines;
}

function printBanner(a: RunningAdapter, config: Config): void {
  for (const line of bannerLines(a, config)) print(line);
}
