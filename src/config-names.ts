// Which environment variables are emr-bridge's: a variable with one of its prefixes that is not a known
// setting is a typo to stop at (FHIR_BASEURL would otherwise be ignored and the bundled EMR started),
// named with the closest known setting. OTEL_ is OpenTelemetry's prefix as well: its variables (the
// specification's, a language SDK's) are no typos, whether emr-bridge reads them or not. Pure: config.ts
// passes the names in.

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

/** OpenTelemetry's variables (src/tracing/otel-variables.ts): accepted, and candidates for the closest name. */
export interface ForeignVariables {
  isForeign(name: string): boolean;
  names: readonly string[];
}

/**
 * One problem per variable that looks like a setting and is none, naming the closest known one (of emr-bridge's
 * settings and OpenTelemetry's variables). Only secrets have a `<NAME>_FILE` variant (those in `known`); another
 * setting's `_FILE` (FHIR_BASE_URL_FILE) says so.
 */
export function unknownSettings(env: Record<string, string>, known: readonly string[], openTelemetry: ForeignVariables): string[] {
  const knownSet = new Set(known);
  const candidates = [...known, ...openTelemetry.names];
  const fileVariants = known.filter((k) => k.endsWith('_FILE') && knownSet.has(k.slice(0, -'_FILE'.length)));
  const problem = (name: string): string => {
    const base = name.endsWith('_FILE') ? name.slice(0, -'_FILE'.length) : '';
    if (knownSet.has(base) && fileVariants.length)
      return `${name}: not a setting of emr-bridge; only secrets are read from a file (${fileVariants.join(', ')}), so set ${base} itself`;
    const closest = closestName(name, candidates);
    if (name.startsWith('OTEL_')) return `${name}: neither an OpenTelemetry variable nor a setting of emr-bridge; did you mean ${closest}?`;
    return `${name}: not a setting of emr-bridge; did you mean ${closest}?`;
  };
  return Object.entries(env)
    .filter(
      ([name, value]) =>
        SETTING_PREFIXES.some((p) => name.startsWith(p)) && !knownSet.has(name) && !isServiceLink(name, value) && !openTelemetry.isForeign(name),
    )
    .map(([name]) => problem(name));
}
