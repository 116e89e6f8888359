// The errors of the MLLP transport. A message names the peer (host:port) and what went wrong, never what
// was being sent: a message's text is patient data.

/**
 * - `unreachable`: no connection could be made (refused, no route, connect timeout, or still backing off).
 * - `timeout`: connected, but no acknowledgment within the deadline; the connection was dropped.
 * - `closed`: the connection closed (either side) before the acknowledgment came, or the client was closed.
 * - `tls`: the TLS handshake failed or the peer refused our certificate.
 */
export type MllpErrorKind = 'unreachable' | 'timeout' | 'closed' | 'tls';

export class MllpError extends Error {
  constructor(
    readonly kind: MllpErrorKind,
    /** host:port of the peer. */
    readonly endpoint: string,
    detail: string,
    cause?: unknown,
  ) {
    super(`MLLP ${endpoint}: ${detail}`, cause === undefined ? undefined : { cause });
    this.name = 'MllpError';
  }
}

/** A message declares (MSH-18) a character set this adapter does not read, or its bytes are not valid in it. */
export class Hl7CharsetError extends Error {
  constructor(
    /** MSH-18 as declared ('' when none). */
    readonly declared: string,
    detail: string,
  ) {
    super(detail);
    this.name = 'Hl7CharsetError';
  }
}
