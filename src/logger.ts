// pino, configured so that patient data cannot reach a log line. The rule is that code logs identifiers
// only (eventId, documentType, attempt, serviceId); the redaction below is the backstop for mistakes.
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
    },
    opts.destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

/** A logger that writes nothing: for tests that do not look at logs. */
export const silentLogger = (): Logger => pino({ level: 'silent' });
