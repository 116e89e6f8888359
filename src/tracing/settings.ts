// The trace settings, for config.ts: the standard OpenTelemetry variables (OTEL_*), read here and in ./tuning.ts
// (the batch processor, the exporter's timeout, compression and TLS files, the span limits) and nowhere else.
// Pure: it checks the values and says where spans go; ./provider.ts builds the SDK from what it returns, with
// every option given explicitly. No endpoint (or OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none):
// undefined, and no tracing at all. The specification's other variables are accepted and ignored
// (./otel-variables.ts says which, and why).
import { z } from 'zod';
import { isLoopback } from '../config-schema.ts';
import { type TraceTuning, traceTuningFrom } from './tuning.ts';

export const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type SamplerName = (typeof SAMPLERS)[number];

const PROTOCOLS = ['http/protobuf', 'http/json'] as const;
export type OtlpProtocol = (typeof PROTOCOLS)[number];

const protocol = z
  .string()
  .trim()
  .refine((v) => (PROTOCOLS as readonly string[]).includes(v), {
    error: (i) =>
      i.input === 'grpc' ? 'grpc is not supported: use http/protobuf (a collector takes it on port 4318) or http/json' : 'must be http/protobuf or http/json',
  })
  .transform((v) => v as OtlpProtocol)
  .optional();

export const TRACING_SETTINGS_SHAPE = {
  // Where spans go: a collector's base address (/v1/traces is added), or the traces URL itself (used as it is).
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().trim().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().trim().optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: protocol,
  // `key=value` pairs, comma-separated, values percent-encoded (W3C Baggage form): a backend's API key, usually.
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: z.string().optional(),
  // service.name of every span; default emr-bridge.
  OTEL_SERVICE_NAME: z.string().trim().optional(),
  OTEL_RESOURCE_ATTRIBUTES: z.string().optional(),
  OTEL_TRACES_SAMPLER: z.enum(SAMPLERS, { error: `must be one of ${SAMPLERS.join(', ')}` }).optional(),
  OTEL_TRACES_SAMPLER_ARG: z.string().trim().optional(),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none'], { error: 'must be otlp or none (emr-bridge exports traces over OTLP/HTTP only)' }).optional(),
  OTEL_SDK_DISABLED: z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
};

/** Where spans go and how they are chosen: everything the SDK is built from (./provider.ts). */
export interface TracingSettings {
  /** The traces URL spans are posted to. */
  url: string;
  protocol: OtlpProtocol;
  /** Sent with every export (a backend's API key): never logged or shown. */
  headers: Record<string, string>;
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, without service.name (OTEL_SERVICE_NAME wins). */
  resourceAttributes: Record<string, string>;
  sampler: { name: SamplerName; ratio: number };
  /** The batch processor, the exporter's timeout, compression and TLS files, the span limits (./tuning.ts). */
  tuning: TraceTuning;
}

type RawTracingSettings = { [K in keyof typeof TRACING_SETTINGS_SHAPE]?: z.output<(typeof TRACING_SETTINGS_SHAPE)[K]> };

/** The settings that hold a secret and may be read from `<NAME>_FILE` instead (config.ts's SECRET_SETTINGS). */
export const TRACING_SECRET_SETTINGS = ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'] as const;

/**
 * `key=value,key=value` with percent-encoded values (the form OTEL_EXPORTER_OTLP_HEADERS and
 * OTEL_RESOURCE_ATTRIBUTES share). A problem names the entry by its position, never its value (a header is a key).
 */
export function parseKeyValues(name: string, raw: string | undefined, problems: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (raw === undefined) return out;
  raw.split(',').forEach((entry, i) => {
    if (entry.trim() === '') return;
    const eq = entry.indexOf('=');
    const key = eq < 0 ? '' : entry.slice(0, eq).trim();
    if (eq < 0 || key === '') {
      problems.push(`${name}: entry ${i + 1} is not key=value`);
      return;
    }
    try {
      out[decodeURIComponent(key)] = decodeURIComponent(entry.slice(eq + 1).trim());
    } catch {
      problems.push(`${name}: entry ${i + 1} is not percent-encoded correctly`);
    }
  });
  return out;
}

/** The traces URL: the traces endpoint as it is, or the base endpoint with v1/traces after its path. */
function tracesUrl(s: RawTracingSettings, production: boolean, problems: string[]): string | undefined {
  const specific = s.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const name = specific ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const given = specific ?? s.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!given) return undefined;
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    problems.push(`${name}: not a URL; expected the collector's address, e.g. http://localhost:4318`);
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    problems.push(`${name}: must be http:// or https:// (OTLP over HTTP), not ${url.protocol}//`);
    return undefined;
  }
  if (url.username || url.password) {
    problems.push(`${name}: must not carry a user or password; put the credential in OTEL_EXPORTER_OTLP_HEADERS`);
    return undefined;
  }
  if (production && url.protocol !== 'https:' && !isLoopback(url.href))
    problems.push(`${name}: must be https with NODE_ENV=production (loopback excepted: a collector beside the adapter)`);
  if (specific) return url.href;
  return `${url.href.replace(/\/+$/, '')}/v1/traces`;
}

/**
 * The sampler, and its ratio for the ratio ones. OTEL_TRACES_SAMPLER_ARG is each sampler's own input: the others
 * take none, so there it is ignored, as the specification says (a platform may set it beside any sampler).
 */
function samplerOf(s: RawTracingSettings, problems: string[]): TracingSettings['sampler'] {
  const name = s.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on';
  const arg = s.OTEL_TRACES_SAMPLER_ARG;
  if (arg === undefined || arg === '' || (name !== 'traceidratio' && name !== 'parentbased_traceidratio')) return { name, ratio: 1 };
  const ratio = Number(arg);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    problems.push('OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1 (the share of traces sampled)');
    return { name, ratio: 1 };
  }
  return { name, ratio };
}

/**
 * The trace settings from the checked values, or undefined when traces are off: no endpoint, OTEL_SDK_DISABLED=true
 * or OTEL_TRACES_EXPORTER=none. Every value is checked even then, so a typo shows before the endpoint is set.
 * `ctx.given` is every setting as given: ./tuning.ts reads the specification's variables from it by name.
 */
export function tracingFrom(
  s: RawTracingSettings,
  ctx: { production: boolean; given: Readonly<Record<string, string | undefined>> },
  problems: string[],
): TracingSettings | undefined {
  const before = problems.length;
  const url = tracesUrl(s, ctx.production, problems);
  const headers = {
    ...parseKeyValues('OTEL_EXPORTER_OTLP_HEADERS', s.OTEL_EXPORTER_OTLP_HEADERS, problems),
    ...parseKeyValues('OTEL_EXPORTER_OTLP_TRACES_HEADERS', s.OTEL_EXPORTER_OTLP_TRACES_HEADERS, problems),
  };
  const { 'service.name': fromAttributes, ...resourceAttributes } = parseKeyValues('OTEL_RESOURCE_ATTRIBUTES', s.OTEL_RESOURCE_ATTRIBUTES, problems);
  const sampler = samplerOf(s, problems);
  const tuning = traceTuningFrom(ctx.given, problems);
  if (url === undefined || problems.length > before || s.OTEL_SDK_DISABLED === 'true' || s.OTEL_TRACES_EXPORTER === 'none') return undefined;
  return {
    url,
    protocol: s.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? s.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    headers,
    // OTEL_SERVICE_NAME wins over a service.name in OTEL_RESOURCE_ATTRIBUTES; the default only when neither is set.
    serviceName: s.OTEL_SERVICE_NAME || fromAttributes || 'emr-bridge',
    resourceAttributes,
    sampler,
    tuning,
  };
}
