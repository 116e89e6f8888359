// The adapter's HTTP listeners: one port for everything by default; with ADMIN_PORT, the public one (the
// webhook receiver, health, readiness) and an admin one (admin API, metrics) that a hospital keeps on its
// internal network. Only these listen; createApp builds the apps without listening.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp, type AppDeps } from '../app/app.ts';

export interface Listeners {
  /** The adapter's own base URL (the receiver). */
  url: string;
  /** Where the admin API and /metrics answer: `url` unless ADMIN_PORT is set. */
  adminUrl: string;
  /** Stops accepting; requests already inside finish. */
  close(): Promise<void>;
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  return closed;
}

/** A base URL a client on this machine can use: a wildcard address is reached over loopback. */
const localUrl = (host: string, port: number) =>
  `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host}:${port}`;

async function serve(deps: AppDeps, surface: AppDeps['surface'], port: number, host: string): Promise<{ server: Server; port: number }> {
  const server = createServer(createApp({ ...deps, surface }).callback());
  server.keepAliveTimeout = 5_000;
  return { server, port: await listen(server, port, host) };
}

export async function startListeners(deps: AppDeps, at: { port: number; host: string; admin?: { host: string; port: number } }): Promise<Listeners> {
  if (!at.admin) {
    const one = await serve(deps, 'all', at.port, at.host);
    const url = localUrl(at.host, one.port);
    return { url, adminUrl: url, close: () => closeServer(one.server) };
  }
  const pub = await serve(deps, 'public', at.port, at.host);
  let admin: Awaited<ReturnType<typeof serve>>;
  try {
    admin = await serve(deps, 'admin', at.admin.port, at.admin.host);
  } catch (err) {
    await closeServer(pub.server);
    throw err;
  }
  return {
    url: localUrl(at.host, pub.port),
    adminUrl: localUrl(at.admin.host, admin.port),
    close: async () => {
      await Promise.all([closeServer(pub.server), closeServer(admin.server)]);
    },
  };
}
