// Which environment variables are emr-bridge's: a variable with one of its prefixes that is not a known
// setting is a typo to stop at (FHIR_BASEURL would otherwise be ignored and the bundled EMR started),
// named with the closest known setting. Pure: config.ts passes the names in.

/** The prefixes of emr-bridge's settings. */
export const SETTING_PREFIXES = [
  'SERVICE_',
  'FHIR_',
  'HL7_',
  'EMR_',
  'ADMIN_',
  'PROCESSOR_',
  'PUSHER_',
  'WEBHOOK_',
  'RETENTION_',
  'SIMULATOR_',
  'DATABASE_',
  'DATA_',
  'LOG_',
  'OTEL_',
];

/**
 * Standard OpenTelemetry variables that are not emr-bridge's (other signals, other SDKs, the Kubernetes operator's
 * inputs to OTEL_RESOURCE_ATTRIBUTES): a platform may set them for every process, so they are neither settings
 * nor typos. Those that would shape traces (OTEL_BSP_*, OTEL_SPAN_*, the exporter's TLS files) are refused instead:
 * emr-bridge does not read them, and whoever set them expects them to count.
 */
const OTHER_OTEL =
  /^OTEL_(METRICS?_|LOGS?_|EXPORTER_OTLP_(METRICS|LOGS)_|EXPORTER_(PROMETHEUS|ZIPKIN|JAEGER|CONSOLE)_|PROPAGATORS$|LOG_LEVEL$|NODE_|RESOURCE_ATTRIBUTES_|SEMCONV_|INSTRUMENTATION_|EXPERIMENTAL_|CONFIG_FILE$|ENTITIES$)/;

/**
 * Variables an orchestrator adds by itself (Kubernetes service links: FHIR_SERVICE_HOST, FHIR_PORT=tcp://…):
 * not settings, and not typos either.
 */
function isServiceLink(name: string, value: string): boolean {
  return (
    /_SERVICE_(HOST|PORT)(_\w+)?$/.test(name) || (/_PORT(_\d+_(TCP|UDP|SCTP)(_\w+)?)?$/.test(name) && /^(tcp|udp|sctp):\/\/|^\d+$|^[\d.:a-f]+$/i.test(value))
  );
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}

export function closestName(name: string, known: readonly string[]): string {
  return known.reduce((best, k) => (distance(name, k) < distance(name, best) ? k : best), known[0]!);
}

/**
 * One problem per variable that looks like a setting and is none, naming the closest known one. Only secrets
 * have a `<NAME>_FILE` variant (those in `known`); another setting's `_FILE` (FHIR_BASE_URL_FILE) says so.
 */
export function unknownSettings(env: Record<string, string>, known: readonly string[]): string[] {
  const knownSet = new Set(known);
  const fileVariants = known.filter((k) => k.endsWith('_FILE') && knownSet.has(k.slice(0, -'_FILE'.length)));
  const problem = (name: string): string => {
    const base = name.endsWith('_FILE') ? name.slice(0, -'_FILE'.length) : '';
    if (knownSet.has(base) && fileVariants.length)
      return `${name}: not a setting of emr-bridge; only secrets are read from a file (${fileVariants.join(', ')}), so set ${base} itself`;
    const closest = closestName(name, known);
    // A long OpenTelemetry name far from every one read is another of its settings, not a typo of ours.
    if (name.startsWith('OTEL_') && distance(name, closest) > 3)
      return `${name}: an OpenTelemetry setting emr-bridge does not read; its traces are configured by the OTEL_* settings of the README`;
    return `${name}: not a setting of emr-bridge; did you mean ${closest}?`;
  };
  return Object.entries(env)
    .filter(([name, value]) => SETTING_PREFIXES.some((p) => name.startsWith(p)) && !knownSet.has(name) && !isServiceLink(name, value) && !OTHER_OTEL.test(name))
    .map(([name]) => problem(name));
}
