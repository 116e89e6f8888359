// The one shape of the undici Agent behind every outgoing client that owns one (the FHIR client, the
// service client, the simulator's file fetcher): each call bounded by `timeoutMs` (headers and body),
// connecting bounded too (at most 5 s), keep-alive, and an optional extra CA trusted beside the system's.
import { rootCertificates } from 'node:tls';
import { Agent } from 'undici';

export interface HttpAgentOptions {
  timeoutMs: number;
  /** Connections per origin; unset: no limit. */
  connections?: number;
  /** A CA trusted in addition to the system's (PEM), for tests against a local https server. */
  trustedCa?: string | Buffer;
}

export function createHttpAgent(opts: HttpAgentOptions): Agent {
  const { timeoutMs } = opts;
  return new Agent({
    ...(opts.connections === undefined ? {} : { connections: opts.connections }),
    keepAliveTimeout: 30_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: { timeout: Math.min(timeoutMs, 5_000), ...(opts.trustedCa ? { ca: [...rootCertificates, opts.trustedCa.toString()] } : {}) },
  });
}
