// `emr-bridge replay` with `.hl7` samples: each message goes over MLLP, one at a time and byte for byte, and prints
// its MSH-9, MSH-10 and acknowledgment code (with the ERR text for AE), exit 0 only when all were AA; where they go
// without --mllp (the adapter's own listener with EMR_PROTOCOL=hl7v2) and what it refuses; and against a running
// adapter on HL7 v2, the MDM sample files its document.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Hl7Message } from '@medplum/core';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { ROOT } from '../../bench/support/child.ts';
import { main } from '../../src/cli/main.ts';
import { buildAck } from '../../src/emr/hl7v2/messages/ack.ts';
import { startMllpListener } from '../../src/emr/hl7v2/mllp/listener.ts';
import { silentLogger } from '../../src/logger.ts';
import { captureOutput } from '../support/captured-output.ts';
import { startHl7Stack } from '../support/hl7-stack.ts';
import { freePort } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';

const HL7 = join(ROOT, 'samples', 'hl7');
const sample = (name: string) => join(HL7, name);
const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-replay-hl7-'));

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (argv: string[]) => captureOutput(() => main(argv));

/** The settings of a FHIR adapter, whatever this process's environment holds: no MLLP listener of its own. */
function fhirSettings(): void {
  vi.stubEnv('EMR_PROTOCOL', 'fhir');
  vi.stubEnv('DATA_DIR', dir);
}

const controlIdOf = (m: Hl7Message) => m.getSegment('MSH')?.getField(10)?.toString() ?? '';

/** The module's own listener, answering AA, or AE (with an ERR naming TXA-12) for the MSH-10s in `refuse`. */
async function listener(refuse: string[] = []) {
  const received: string[] = [];
  const l = await startMllpListener({
    host: '127.0.0.1',
    port: 0,
    maxMessageBytes: 1024 * 1024,
    logger: silentLogger(),
    onMessage: async (message) => {
      const id = controlIdOf(message);
      received.push(id);
      const error = refuse.includes(id)
        ? { field: 'TXA-12', location: { segment: 'TXA', sequence: 1, position: 12 }, code: '103' as const, text: 'no such document here' }
        : undefined;
      return buildAck(message, error ? 'AE' : 'AA', { controlId: `ACK-${id}`, now: Date.now(), ...(error ? { error } : {}) }).message;
    },
  });
  return { url: `mllp://127.0.0.1:${l.port}`, received, close: () => l.close() };
}

/**
 * A bare TCP listener that keeps every frame's bytes as they arrived and answers each AA after a pause, noting any
 * frame that arrived while an answer was still owed (a second message in flight).
 */
async function rawListener() {
  const frames: Buffer[] = [];
  let overlapped = 0;
  let owed = 0;
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    let buf = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      for (let end = buf.indexOf(Buffer.from([0x1c, 0x0d])); end !== -1; end = buf.indexOf(Buffer.from([0x1c, 0x0d]))) {
        const body = buf.subarray(buf.indexOf(0x0b) + 1, end);
        buf = buf.subarray(end + 2);
        frames.push(Buffer.from(body));
        if (owed > 0) overlapped++;
        owed++;
        const id = body.toString('latin1').split('\r')[0]!.split('|')[9];
        setTimeout(() => {
          owed--;
          socket.write(`\x0bMSH|^~\\&|RAW|TEST|EMR|HOSPITAL|20260301000000||ACK|ACK-${id}|P|2.5.1\rMSA|AA|${id}\r\x1c\r`);
        }, 30);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `mllp://127.0.0.1:${(server.address() as { port: number }).port}`,
    frames,
    overlapped: () => overlapped,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('emr-bridge replay with .hl7 samples', () => {
  it('sends the samples in order and prints each MSH-9, MSH-10 and AA, exit 0', async () => {
    fhirSettings();
    const l = await listener();
    try {
      const res = await run(['replay', sample('mdm-t02.hl7'), sample('oru-r01.hl7'), sample('mdm-t11.hl7'), '--mllp', l.url]);
      expect(res.code, res.err).toBe(0);
      expect(l.received).toEqual(['EMR-9003', 'EMR-9005', 'EMR-9004']);
      expect(res.out).toMatch(/mdm-t02\.hl7\s+MDM\^T02\^MDM_T02\s+EMR-9003\s+AA\n/);
      expect(res.out).toMatch(/oru-r01\.hl7\s+ORU\^R01\^ORU_R01\s+EMR-9005\s+AA\n/);
      expect(res.out).toMatch(/mdm-t11\.hl7\s+MDM\^T11\^MDM_T01\s+EMR-9004\s+AA\n/);
      expect(res.out).toContain('3 acknowledged AA by 127.0.0.1:');
    } finally {
      await l.close();
    }
  });

  it('prints the ERR text of an AE, goes on with the rest, and exits 1', async () => {
    fhirSettings();
    const l = await listener(['EMR-9003']);
    try {
      const res = await run(['replay', sample('mdm-t02.hl7'), sample('oru-r01.hl7'), '--mllp', l.url]);
      expect(res.code).toBe(1);
      expect(l.received).toEqual(['EMR-9003', 'EMR-9005']);
      expect(res.out).toMatch(/mdm-t02\.hl7\s+MDM\^T02\^MDM_T02\s+EMR-9003\s+AE\s+TXA-12: no such document here\n/);
      expect(res.out).toMatch(/oru-r01\.hl7\s+ORU\^R01\^ORU_R01\s+EMR-9005\s+AA\n/);
      expect(res.out).toContain('1 acknowledged AA by 127.0.0.1:');
      expect(res.out).toContain(', 1 not');
    } finally {
      await l.close();
    }
  });

  it('sends each file byte for byte, the ISO-8859-1 one too, LF line ends as CR, one message in flight at a time', async () => {
    fhirSettings();
    const lf = join(dir, 'adt-lf.hl7');
    const crText = readFileSync(sample('adt-a28.hl7'), 'latin1');
    writeFileSync(lf, crText.replaceAll('\r', '\n'));
    // Two messages in one file: each begins at its MSH.
    const two = join(dir, 'two.hl7');
    writeFileSync(two, Buffer.concat([readFileSync(sample('siu-s12.hl7')), readFileSync(sample('siu-s13.hl7'))]));
    const raw = await rawListener();
    try {
      const res = await run(['replay', sample('mdm-t02-latin1.hl7'), lf, two, '--mllp', raw.url]);
      expect(res.code, res.out + res.err).toBe(0);
      expect(raw.frames).toHaveLength(4);
      expect(raw.frames[0]!.equals(readFileSync(sample('mdm-t02-latin1.hl7')))).toBe(true);
      expect(raw.frames[0]!.includes(Buffer.from([0xfc]))).toBe(true);
      expect(raw.frames[1]!.toString('latin1')).toBe(crText);
      expect(raw.frames[2]!.equals(readFileSync(sample('siu-s12.hl7')))).toBe(true);
      expect(raw.frames[3]!.equals(readFileSync(sample('siu-s13.hl7')))).toBe(true);
      expect(raw.overlapped()).toBe(0);
      expect(res.out).toMatch(/two\.hl7\s+SIU\^S12\^SIU_S12/);
      expect(res.out).toMatch(/two\.hl7\s+SIU\^S13\^SIU_S12/);
    } finally {
      await raw.close();
    }
  });

  it('stops at a listener that cannot be reached, counting what was not sent, exit 1', async () => {
    fhirSettings();
    const port = await freePort();
    const res = await run(['replay', sample('mdm-t02.hl7'), sample('oru-r01.hl7'), '--mllp', `mllp://127.0.0.1:${port}`]);
    expect(res.code).toBe(1);
    expect(res.out).toMatch(/mdm-t02\.hl7\s+MDM\^T02\^MDM_T02\s+EMR-9003\s+none\s+MLLP 127\.0\.0\.1:\d+: /);
    expect(res.out).toContain('0 acknowledged AA');
    expect(res.out).toContain('1 not sent');
  });

  it('goes to the listener the settings name (EMR_PROTOCOL=hl7v2, HL7_LISTEN_PORT) when no --mllp is given', async () => {
    const l = await listener();
    try {
      vi.stubEnv('EMR_PROTOCOL', 'hl7v2');
      vi.stubEnv('DATA_DIR', dir);
      vi.stubEnv('HL7_LISTEN_HOST', '127.0.0.1');
      vi.stubEnv('HL7_LISTEN_PORT', new URL(l.url.replace('mllp:', 'http:')).port);
      const res = await run(['replay', sample('mdm-t02.hl7')]);
      expect(res.code, res.err).toBe(0);
      expect(l.received).toEqual(['EMR-9003']);
    } finally {
      await l.close();
    }
  });

  it('refuses a named .hl7 file with nowhere to send it, and a --mllp that is not an MLLP address, exit 2', async () => {
    fhirSettings();
    const nowhere = await run(['replay', sample('mdm-t02.hl7')]);
    expect(nowhere.code).toBe(2);
    expect(nowhere.err).toContain('give --mllp mllp://host:port');
    expect(nowhere.err).toContain('usage: emr-bridge replay');
    const wrong = await run(['replay', sample('mdm-t02.hl7'), '--mllp', 'http://127.0.0.1:2575']);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain('--mllp: not an MLLP address');
  });

  it('leaves out the .hl7 files of a folder when there is no listener to send them to', async () => {
    fhirSettings();
    const res = await run(['replay', HL7]);
    expect(res.code, res.err).toBe(0);
    expect(res.out).toMatch(/\d+ \.hl7 samples left out/);
  });

  it('files the document of samples/hl7/mdm-t02.hl7 in a running adapter on HL7 v2', async () => {
    const s = await startHl7Stack();
    try {
      const listenerUrl = /listener (mllp:\/\/\S+)/.exec(s.adapter.emr?.detail ?? '')?.[1];
      expect(listenerUrl).toBeDefined();
      fhirSettings();
      const res = await run(['replay', sample('mdm-t02.hl7'), '--mllp', listenerUrl!]);
      expect(res.code, res.out + res.err).toBe(0);
      expect(res.out).toMatch(/MDM\^T02\^MDM_T02\s+EMR-9003\s+AA/);
      const doc = await waitFor(async () => {
        const r = await s.admin<{ document?: { externalId: string; documentType: string } }>('GET', '/documents/DOC-1001');
        return r.status === 200 ? r.body.document : undefined;
      });
      expect(doc).toMatchObject({ externalId: 'DOC-1001', documentType: 'lab_report' });
      // The same message again: acknowledged AA, not taken twice.
      const again = await run(['replay', sample('mdm-t02.hl7'), '--mllp', listenerUrl!]);
      expect(again.code).toBe(0);
      const listed = (await s.admin<{ documents: { externalId: string }[] }>('GET', '/documents')).body.documents;
      expect(listed.filter((d) => d.externalId === 'DOC-1001')).toHaveLength(1);
    } finally {
      await s.close();
    }
  }, 30_000);
});
