// Reading an MLLP address: mllp://host:port (plain TCP) or mllps://host:port (TLS).
import { isIP } from 'node:net';

export interface MllpEndpoint {
  secure: boolean;
  host: string;
  port: number;
  /** host:port, for error messages and logs. */
  label: string;
}

/** The IANA port for HL7 over MLLP, when the address names none. */
export const DEFAULT_MLLP_PORT = 2575;

export function parseMllpUrl(url: string): MllpEndpoint {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError(`not an MLLP address (mllp://host:port or mllps://host:port): ${url}`);
  }
  const secure = parsed.protocol === 'mllps:';
  if (!secure && parsed.protocol !== 'mllp:') throw new TypeError(`not an MLLP address (mllp://host:port or mllps://host:port): ${url}`);
  if (parsed.hostname === '' || (parsed.pathname !== '' && parsed.pathname !== '/') || parsed.search !== '' || parsed.username !== '') {
    throw new TypeError(`an MLLP address is scheme://host:port and nothing more: ${url}`);
  }
  // URL keeps IPv6 literals in brackets; sockets want them bare.
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  const port = parsed.port === '' ? DEFAULT_MLLP_PORT : Number(parsed.port);
  return { secure, host, port, label: isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}` };
}
