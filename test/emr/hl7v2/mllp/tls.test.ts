// mllps:// and the TLS listener with a certificate chain made for the test (a CA, a server and a client
// certificate signed by it, and an impostor CA): mutual TLS works, a client without a certificate is
// refused, and the client checks the listener's certificate.
import type { Hl7Message } from '@medplum/core';
import { Hl7Message as Hl7 } from '@medplum/core';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createManualClock } from '../../../../src/clock.ts';
import { createMllpClient, type MllpClientOptions } from '../../../../src/emr/hl7v2/mllp/client.ts';
import { type MllpListenerOptions, startMllpListener } from '../../../../src/emr/hl7v2/mllp/listener.ts';
import { captureLogger } from '../../../support/log-capture.ts';
import { waitFor } from '../../../support/wait.ts';
import { makeTestPki, type TestPki } from './support/certs.ts';
import { adt } from './support/peers.ts';

let pki: TestPki;
beforeAll(() => {
  pki = makeTestPki();
});

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function listen(tls: MllpListenerOptions['tls']) {
  const log = captureLogger();
  const taken: string[] = [];
  const listener = await startMllpListener({
    host: '127.0.0.1',
    port: 0,
    tls,
    maxMessageBytes: 1024 * 1024,
    logger: log.logger,
    onMessage: async (message: Hl7Message) => {
      taken.push(message.getSegment('MSH')!.getField(10)!.toString());
      return message.buildAck({ ackCode: 'AA' });
    },
  });
  cleanup.push(() => listener.close());
  return { listener, taken, log };
}

function client(port: number, tls: MllpClientOptions['tls'], host = '127.0.0.1') {
  const sender = createMllpClient({ url: `mllps://${host}:${port}`, tls, ackTimeoutMs: 2_000, clock: createManualClock() });
  cleanup.push(() => sender.close());
  return sender;
}

describe('mllps with mutual TLS', () => {
  it('delivers and acknowledges when both sides present certificates from the CA the other trusts', async () => {
    const { listener, taken } = await listen({ ...pki.server, ca: pki.ca });
    const sender = client(listener.port, { ...pki.client, ca: pki.ca });
    const ack = await sender.send(Hl7.parse(adt('TLS-1')));
    expect(ack.getSegment('MSA')!.getField(1)!.toString()).toBe('AA');
    // By name too: the server certificate carries DNS:localhost.
    await client(listener.port, { ...pki.client, ca: pki.ca }, 'localhost').send(Hl7.parse(adt('TLS-2')));
    expect(taken).toEqual(['TLS-1', 'TLS-2']);
  });

  it('refuses a client without a certificate when the listener has a CA: the send fails as tls, nothing is handed on', async () => {
    const { listener, taken, log } = await listen({ ...pki.server, ca: pki.ca });
    const sender = client(listener.port, { ca: pki.ca });
    await expect(sender.send(Hl7.parse(adt('NO-CERT')))).rejects.toMatchObject({ kind: 'tls' });
    await waitFor(() => log.lines().some((l) => l.msg === 'MLLP TLS handshake failed'));
    expect(taken).toEqual([]);
  });

  it('refuses a client certificate from another CA: nothing is handed on', async () => {
    const { listener, taken, log } = await listen({ ...pki.server, ca: pki.otherCa });
    const sender = client(listener.port, { ...pki.client, ca: pki.ca });
    // Node's TLS server checks the client's chain after the handshake and just closes, with no TLS alert,
    // so this client can only see a closed connection (an EMR's OpenSSL-based listener sends unknown_ca,
    // which is 'tls').
    await expect(sender.send(Hl7.parse(adt('WRONG-CA')))).rejects.toMatchObject({ kind: 'closed' });
    await waitFor(() => log.lines().some((l) => l.msg === 'MLLP TLS handshake failed'));
    expect(taken).toEqual([]);
  });

  it('takes a client without a certificate when the listener has no CA (server-side TLS only)', async () => {
    const { listener, taken } = await listen({ ...pki.server });
    await client(listener.port, { ca: pki.ca }).send(Hl7.parse(adt('ANON')));
    expect(taken).toEqual(['ANON']);
  });
});

describe('the client checks the listener', () => {
  it('refuses a listener whose certificate comes from another CA, as tls, before sending anything', async () => {
    const { listener, taken } = await listen({ ...pki.otherServer });
    const err = await client(listener.port, { ...pki.client, ca: pki.ca })
      .send(Hl7.parse(adt('IMPOSTOR')))
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'tls', message: expect.stringContaining(`127.0.0.1:${listener.port}`) });
    expect(taken).toEqual([]);
  });

  it("uses Node's default trust when given no CA, so a private CA's listener is refused", async () => {
    const { listener, taken } = await listen({ ...pki.server });
    await expect(client(listener.port, undefined).send(Hl7.parse(adt('DEFAULT-TRUST')))).rejects.toMatchObject({ kind: 'tls' });
    expect(taken).toEqual([]);
  });
});
