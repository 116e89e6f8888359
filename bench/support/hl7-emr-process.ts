// The bundled HL7 EMR (src/hl7-emr/, startHl7Emr, in memory as `emr-bridge hl7-emr` runs it) in a process of its
// own for the HL7 benchmark (../hl7.ts), driven over IPC rather than its HTTP control API: a 1 MB PDF filed
// through the control API would be 1.4 MB of JSON parsed in this process per document, which is the
// benchmark's cost, not the EMR's.
// Run: node bin/run-ts.js bench/support/hl7-emr-process.ts [mllp://host:port to notify [connections to it, default
// 1]]; started with an IPC channel (./hl7-emr-child.ts), it sends { listening: url } once it listens, then
// answers each request with { id, ... }.
import { randomBytes } from 'node:crypto';
import { startHl7Emr } from '../../src/hl7-emr/server.ts';
import { silentLogger } from '../../src/logger.ts';

export type EmrRequest =
  | { id: number; cmd: 'counts' }
  | {
      id: number;
      cmd: 'file';
      /** TXA-12 of each document. */
      documentIds: string[];
      patientServiceId: string;
      /** Size of each PDF in bytes; `variants` distinct PDFs of that size are made once and filed in turn. */
      bytes: number;
      variants: number;
    };

export interface EmrCounts {
  appointments: number;
  patients: number;
  pending: number;
}

const [notify, connections] = process.argv.slice(2);
const emr = await startHl7Emr({
  port: 0,
  ...(notify ? { notify } : {}),
  ...(connections ? { notifyConnections: Number(connections) } : {}),
  retry: { baseMs: 50, maxMs: 500 },
  logger: silentLogger(),
});

const pdfs = new Map<string, Buffer[]>();
function pdfsOf(bytes: number, variants: number): Buffer[] {
  const key = `${bytes}:${variants}`;
  let made = pdfs.get(key);
  if (!made) {
    const head = Buffer.from('%PDF-1.4\n');
    made = Array.from({ length: variants }, () => Buffer.concat([head, randomBytes(Math.max(0, bytes - head.length))]));
    pdfs.set(key, made);
  }
  return made;
}

let n = 0;
process.on('message', (m: EmrRequest) => {
  const reply = (body: Record<string, unknown>) => process.send!({ id: m.id, ...body });
  try {
    if (m.cmd === 'counts') {
      reply({ appointments: emr.appointments().length, patients: emr.patients().length, pending: emr.pendingNotifications() } satisfies EmrCounts);
      return;
    }
    const files = pdfsOf(m.bytes, m.variants);
    for (const documentId of m.documentIds)
      emr.fileDocument({
        patientServiceId: m.patientServiceId,
        documentType: 'lab_report',
        label: 'Bench report',
        pdf: files[n++ % files.length]!,
        documentId,
      });
    reply({ filed: m.documentIds.length });
  } catch (err) {
    reply({ error: (err as Error).message });
  }
});
const stop = () => void emr.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
// The benchmark went away without stopping us.
process.on('disconnect', stop);
process.send!({ listening: emr.url });
