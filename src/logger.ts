// pino, configured so that patient data cannot reach a log line. The rule is that code logs identifiers
// only (eventId, documentType, attempt, serviceId); the redaction below is the backstop for mistakes. A line
// written inside a sampled span (src/tracing/) carries its trace_id and span_id, so a log line leads to its trace.
import { TraceFlags, trace } from '@opentelemetry/api';
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger } from 'pino';

/** Keys whose values are patient data or secrets wherever they appear (up to four levels deep). */
export const SENSITIVE_KEYS = [
  'name',
  'patientName',
  'phone',
  'patientPhone',
  'doctorPhone',
  'label',
  'text',
  'notes',
  'token',
  'base64',
  'file',
  'body',
  'rawBody',
  'payload',
  'authorization',
  'Authorization',
  'signingSecret',
  'signingSecrets',
  'privateKey',
  'access_token',
  'client_assertion',
  'secret',
  'secrets',
  'apiKey',
  'x-service-signature',
] as const;

function redactPaths(): string[] {
  const paths: string[] = [];
  for (const key of SENSITIVE_KEYS) {
    const k = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `["${key}"]`;
    const sep = k.startsWith('[') ? '' : '.';
    paths.push(k, `*${sep}${k}`, `*.*${sep}${k}`, `*.*.*${sep}${k}`);
  }
  return paths;
}

/**
 * The ids of the span active when a line is written, when it is sampled (exported). With tracing off nothing is
 * registered: the API answers that no span is active.
 */
export function traceIds(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (span === undefined) return {};
  const c = span.spanContext();
  return c.traceFlags & TraceFlags.SAMPLED ? { trace_id: c.traceId, span_id: c.spanId } : {};
}

export interface LoggerOptions {
  level?: string;
  /** Where lines go; standard output by default. Tests pass a stream to read what was written. */
  destination?: DestinationStream;
  name?: string;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  return pino(
    {
      level: opts.level ?? 'info',
      redact: { paths: redactPaths(), censor: '[redacted]' },
      serializers: { err: pino.stdSerializers.err },
      // `app`, not pino's `name`: a top-level `name` is redacted as patient data.
      base: { app: opts.name ?? 'emr-bridge' },
      mixin: traceIds,
    },
    opts.destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** A logger that writes nothing: for tests that do not look at logs. */
export const silentLogger = (): Logger => pino({ level: 'silent' });
