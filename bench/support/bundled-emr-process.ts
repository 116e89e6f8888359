// The bundled HL7 EMR in a process of its own for ../emr-latency.ts, with its control API (/_emr/, read for its
// patients and appointments): `emr-bridge hl7-emr` prints its MLLP address first, and ./child.ts waits for an
// http:// one. Prints `mllp on <url>` and then `listening on <control url>`; stops on SIGTERM.
// Run: node bin/run-ts.js bench/support/bundled-emr-process.ts hl7 mllp://127.0.0.1:2575 [notify connections, default 1]
import { startHl7Emr } from '../../src/hl7-emr/server.ts';
import { silentLogger } from '../../src/logger.ts';

const [kind, arg, connections] = process.argv.slice(2);
const logger = silentLogger();

async function start(): Promise<() => Promise<void>> {
  if (kind === 'hl7' && arg) {
    const notifyConnections = connections ? Number(connections) : 1;
    const emr = await startHl7Emr({ port: 0, host: '127.0.0.1', notify: arg, notifyConnections, controlPort: 0, logger });
    process.stdout.write(`mllp on ${emr.url}\nlistening on ${emr.controlUrl}\n`);
    return () => emr.close();
  }
  throw new Error('usage: bundled-emr-process.ts hl7 <notify mllp://host:port> [notify connections]');
}

const close = await start();
process.once('SIGTERM', () => void close().then(() => process.exit(0)));
