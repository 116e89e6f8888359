// A throw-away certificate chain for the MLLP TLS tests: a CA, a server and a client certificate signed by
// it, and a second CA with a server certificate of its own (the impostor). node:crypto can read X.509 but
// not issue it, so the openssl command line makes them, in a temp dir removed straight after.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KeyPair {
  cert: Buffer;
  key: Buffer;
}

export interface TestPki {
  ca: Buffer;
  server: KeyPair;
  client: KeyPair;
  /** A CA the client does not trust, and a server certificate for 127.0.0.1 signed by it. */
  otherCa: Buffer;
  otherServer: KeyPair;
}

const SERVER_EXT = 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n';
const CLIENT_EXT = 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n';

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'emr-bridge-mllp-pki-'));
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const newKey = (name: string) => openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file(`${name}.key`));
  const newCa = (name: string) => {
    newKey(name);
    openssl(
      'req',
      '-x509',
      '-new',
      '-key',
      file(`${name}.key`),
      '-subj',
      `/CN=${name}`,
      '-days',
      '2',
      '-out',
      file(`${name}.crt`),
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    );
  };
  const issue = (name: string, ca: string, ext: string): KeyPair => {
    newKey(name);
    writeFileSync(file(`${name}.ext`), ext);
    openssl('req', '-new', '-key', file(`${name}.key`), '-subj', `/CN=${name}`, '-out', file(`${name}.csr`));
    openssl(
      'x509',
      '-req',
      '-in',
      file(`${name}.csr`),
      '-CA',
      file(`${ca}.crt`),
      '-CAkey',
      file(`${ca}.key`),
      '-CAcreateserial',
      '-days',
      '2',
      '-extfile',
      file(`${name}.ext`),
      '-out',
      file(`${name}.crt`),
    );
    return { cert: readFileSync(file(`${name}.crt`)), key: readFileSync(file(`${name}.key`)) };
  };
  try {
    newCa('test-ca');
    newCa('other-ca');
    return {
      ca: readFileSync(file('test-ca.crt')),
      server: issue('server', 'test-ca', SERVER_EXT),
      client: issue('client', 'test-ca', CLIENT_EXT),
      otherCa: readFileSync(file('other-ca.crt')),
      otherServer: issue('other-server', 'other-ca', SERVER_EXT),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
