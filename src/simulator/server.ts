// The simulator on a port: for `emr-bridge simulator`, zero-configuration `serve`, and end-to-end tests.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../logger.ts';
import { createSimulator, type Simulator } from './simulator.ts';

export interface SimulatorServerOptions {
  port?: number;
  host?: string;
  dbPath?: string;
  logger: Logger;
  trustedCa?: string | Buffer;
}

// A wildcard bind is reached on loopback; a specific address (HOST=10.0.0.5) only on itself.
function advertisedHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

export interface RunningSimulator {
  url: string;
  port: number;
  simulator: Simulator;
  close(): Promise<void>;
}

export async function startSimulatorServer(opts: SimulatorServerOptions): Promise<RunningSimulator> {
  const simulator = createSimulator({
    logger: opts.logger,
    ...(opts.dbPath ? { dbPath: opts.dbPath } : {}),
    ...(opts.trustedCa ? { trustedCa: opts.trustedCa } : {}),
  });
  const server = createServer(simulator.app.callback());
  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  simulator.start();
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${advertisedHost(host)}:${port}`,
    port,
    simulator,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await simulator.stop();
    },
  };
}
