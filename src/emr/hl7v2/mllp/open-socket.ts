// Making the client's one connection: plain TCP for mllp://, TLS for mllps://, within a deadline, and
// telling a peer that is not there ('unreachable') from one whose TLS we refuse or that refuses ours ('tls').
import net from 'node:net';
import tls from 'node:tls';
import type { MllpEndpoint } from './endpoint.ts';
import { MllpError } from './errors.ts';

export interface ClientTls {
  /** Our certificate and key, for a listener that asks for one. */
  cert?: Buffer;
  key?: Buffer;
  /** The CA the peer's certificate must chain to; without it, Node's default trust. */
  ca?: Buffer;
}

/** An error the TLS layer raised (handshake, certificate check, an alert from the peer). */
export function isTlsError(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return false;
  return (
    code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || /^(UNABLE_TO_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_|INVALID_CA|PATH_LENGTH)/.test(code)
  );
}

const describe = (err: unknown): string => {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.name : 'error';
};

export function openSocket(endpoint: MllpEndpoint, tlsOptions: ClientTls | undefined, timeoutMs: number, signal: AbortSignal): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const { host, port, label } = endpoint;
    const socket = endpoint.secure
      ? tls.connect({ host, port, cert: tlsOptions?.cert, key: tlsOptions?.key, ca: tlsOptions?.ca, ...(net.isIP(host) ? {} : { servername: host }) })
      : net.connect({ host, port });
    const ready = endpoint.secure ? 'secureConnect' : 'connect';
    const fail = (err: MllpError) => {
      cleanup();
      socket.destroy();
      reject(err);
    };
    // Only what the TLS layer itself reports is 'tls' (a certificate refused, either way): a peer that hangs
    // or drops mid-handshake is as good as not there, and a retry may cure that but not a certificate.
    const onError = (err: Error) => fail(new MllpError(isTlsError(err) ? 'tls' : 'unreachable', label, `could not connect (${describe(err)})`, err));
    const onClose = () => fail(new MllpError('unreachable', label, 'connection closed while connecting'));
    const onAbort = () => fail(new MllpError('closed', label, 'client closed while connecting'));
    const onReady = () => {
      cleanup();
      resolve(socket);
    };
    const timer = setTimeout(() => fail(new MllpError('unreachable', label, `no connection within ${timeoutMs} ms`)), timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      socket.off('error', onError).off('close', onClose).off(ready, onReady);
      signal.removeEventListener('abort', onAbort);
    };
    socket.on('error', onError).on('close', onClose).on(ready, onReady);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}
