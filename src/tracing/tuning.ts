// The OpenTelemetry variables that tune the trace pipeline, read as the specification defines them: the batch
// span processor (OTEL_BSP_*), the OTLP exporter's timeout, compression and TLS files (the traces variant wins
// over the general one), and the span limits (the span ones win over OTEL_ATTRIBUTE_*). Unset, emr-bridge's own
// values hold. Pure: config.ts passes the settings as given; ./provider.ts hands each value to the SDK itself,
// since @opentelemetry/sdk-trace 2.x reads none of them and the exporter reads only what it is not given (from
// process.env, never a .env file). A malformed value stops start-up, named; the specification's "warn and
// ignore" would leave a platform's setting silently without effect.
import { resolve } from 'node:path';

export type Compression = 'none' | 'gzip';

/** A file the exporter's TLS reads at start (./provider.ts), with the variable that named it. */
export interface TlsFile {
  setting: string;
  /** Absolute: a relative path is taken from the working directory, as the SDK would. */
  path: string;
}

export interface TraceTuning {
  batch: { scheduledDelayMillis: number; exportTimeoutMillis: number; maxQueueSize: number; maxExportBatchSize: number };
  export: { timeoutMillis: number; compression: Compression; tls: { ca?: TlsFile; cert?: TlsFile; key?: TlsFile } };
  spanLimits: {
    attributeValueLengthLimit: number;
    attributeCountLimit: number;
    eventCountLimit: number;
    linkCountLimit: number;
    attributePerEventCountLimit: number;
    attributePerLinkCountLimit: number;
  };
}

/**
 * emr-bridge's values where nothing is set. Spans leave within a second (the specification's 5 s would hold a
 * trace back while someone looks for it), a burst of 8192 spans is queued before any is dropped, and the limits
 * are tight: a span carries identifiers only (./attributes.ts), so more would be a defect to cut short.
 */
export const DEFAULT_TRACE_TUNING: TraceTuning = {
  batch: { scheduledDelayMillis: 1000, exportTimeoutMillis: 30_000, maxQueueSize: 8192, maxExportBatchSize: 512 },
  export: { timeoutMillis: 10_000, compression: 'none', tls: {} },
  spanLimits: {
    attributeValueLengthLimit: 256,
    attributeCountLimit: 64,
    eventCountLimit: 32,
    linkCountLimit: 8,
    attributePerEventCountLimit: 16,
    attributePerLinkCountLimit: 16,
  },
};

/** The specification's integers run to 2³¹ − 1; a timeout of 0 means none, which this stands for (setTimeout's most). */
const MOST = 2 ** 31 - 1;

type Env = Readonly<Record<string, string | undefined>>;

/** The specification's numeric kinds: a duration or a timeout in milliseconds (a timeout's 0 is none), a count, a size. */
type Kind = 'duration' | 'timeout' | 'count' | 'size';
const EXPECTED: Record<Kind, string> = {
  duration: `a whole number of milliseconds, 0 to ${MOST}`,
  timeout: `a whole number of milliseconds, 1 to ${MOST}, or 0 for no timeout`,
  count: `a whole number, 0 to ${MOST}`,
  size: `a whole number, 1 to ${MOST}`,
};

function whole(env: Env, name: string, kind: Kind, problems: string[]): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= (kind === 'size' ? 1 : 0) && n <= MOST)) {
    problems.push(`${name}: must be ${EXPECTED[kind]}`);
    return undefined;
  }
  return kind === 'timeout' && n === 0 ? MOST : n;
}

/** The first of the variables that is set (each is checked): the traces one before the general one. */
function first<T>(names: readonly string[], read: (name: string) => T | undefined): T | undefined {
  const values = names.map(read);
  return values.find((v) => v !== undefined);
}

function batchOf(env: Env, problems: string[]): TraceTuning['batch'] {
  const d = DEFAULT_TRACE_TUNING.batch;
  const maxQueueSize = whole(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 'size', problems) ?? d.maxQueueSize;
  const batchSize = whole(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 'size', problems);
  if (batchSize !== undefined && batchSize > maxQueueSize)
    problems.push(`OTEL_BSP_MAX_EXPORT_BATCH_SIZE: must not be above OTEL_BSP_MAX_QUEUE_SIZE (${batchSize} > ${maxQueueSize})`);
  return {
    scheduledDelayMillis: whole(env, 'OTEL_BSP_SCHEDULE_DELAY', 'duration', problems) ?? d.scheduledDelayMillis,
    exportTimeoutMillis: whole(env, 'OTEL_BSP_EXPORT_TIMEOUT', 'timeout', problems) ?? d.exportTimeoutMillis,
    maxQueueSize,
    // A smaller queue set alone takes the batch size down with it.
    maxExportBatchSize: Math.min(batchSize ?? d.maxExportBatchSize, maxQueueSize),
  };
}

function compressionOf(env: Env, name: string, problems: string[]): Compression | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  if (raw === 'gzip' || raw === 'none') return raw;
  problems.push(`${name}: must be gzip or none`);
  return undefined;
}

const otlp = (key: string) => [`OTEL_EXPORTER_OTLP_TRACES_${key}`, `OTEL_EXPORTER_OTLP_${key}`] as const;

function tlsFile(env: Env, key: string): TlsFile | undefined {
  const setting = otlp(key).find((name) => env[name]?.trim());
  return setting ? { setting, path: resolve(env[setting]!.trim()) } : undefined;
}

function exportOf(env: Env, problems: string[]): TraceTuning['export'] {
  const d = DEFAULT_TRACE_TUNING.export;
  const ca = tlsFile(env, 'CERTIFICATE');
  const cert = tlsFile(env, 'CLIENT_CERTIFICATE');
  const key = tlsFile(env, 'CLIENT_KEY');
  if (Boolean(cert) !== Boolean(key)) {
    const [given, missing] = cert ? [cert.setting, 'OTEL_EXPORTER_OTLP_CLIENT_KEY'] : [key!.setting, 'OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE'];
    problems.push(`${given}: a client certificate and its key go together; set ${missing} (or its TRACES_ form) too`);
  }
  return {
    timeoutMillis: first(otlp('TIMEOUT'), (name) => whole(env, name, 'timeout', problems)) ?? d.timeoutMillis,
    compression: first(otlp('COMPRESSION'), (name) => compressionOf(env, name, problems)) ?? d.compression,
    tls: { ...(ca ? { ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) },
  };
}

function spanLimitsOf(env: Env, problems: string[]): TraceTuning['spanLimits'] {
  const d = DEFAULT_TRACE_TUNING.spanLimits;
  const count = (...names: string[]) => first(names, (name) => whole(env, name, 'count', problems));
  return {
    attributeValueLengthLimit: count('OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT', 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT') ?? d.attributeValueLengthLimit,
    attributeCountLimit: count('OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_COUNT_LIMIT') ?? d.attributeCountLimit,
    eventCountLimit: count('OTEL_SPAN_EVENT_COUNT_LIMIT') ?? d.eventCountLimit,
    linkCountLimit: count('OTEL_SPAN_LINK_COUNT_LIMIT') ?? d.linkCountLimit,
    attributePerEventCountLimit: count('OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_COUNT_LIMIT') ?? d.attributePerEventCountLimit,
    attributePerLinkCountLimit: count('OTEL_LINK_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_COUNT_LIMIT') ?? d.attributePerLinkCountLimit,
  };
}

/** The variables this module reads, every one a name of the specification's list (./otel-variables.ts). */
export const TRACE_TUNING_VARIABLES: readonly string[] = [
  'OTEL_BSP_SCHEDULE_DELAY',
  'OTEL_BSP_EXPORT_TIMEOUT',
  'OTEL_BSP_MAX_QUEUE_SIZE',
  'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
  ...['TIMEOUT', 'COMPRESSION', 'CERTIFICATE', 'CLIENT_CERTIFICATE', 'CLIENT_KEY'].flatMap(otlp),
  'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT',
  'OTEL_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT',
  'OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_SPAN_EVENT_COUNT_LIMIT',
  'OTEL_SPAN_LINK_COUNT_LIMIT',
  'OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT',
  'OTEL_LINK_ATTRIBUTE_COUNT_LIMIT',
];

/** The tuning from the settings as given (an empty value is unset); every problem is pushed, named. */
export function traceTuningFrom(env: Env, problems: string[]): TraceTuning {
  return { batch: batchOf(env, problems), export: exportOf(env, problems), spanLimits: spanLimitsOf(env, problems) };
}
