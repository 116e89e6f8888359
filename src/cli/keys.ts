// `emr-bridge keys generate [--alg ES384|RS384] [--out FILE]`: a new key pair for SMART Backend Services.
// The private key goes to FILE (mode 0600, never overwritten); the public JWKS, to register with the
// EMR's authorization server, goes to standard output.
import { resolve } from 'node:path';
import { CLIENT_KEY_ALGS, generateClientKey, jwksOf, writePrivateKey, type ClientKeyAlg } from '../emr/fhir/auth/keys.ts';
import { UsageError, parse } from './args.ts';
import { print } from './output.ts';

export const KEYS_USAGE = `usage: emr-bridge keys generate [--alg ES384|RS384] [--out FILE]

Makes a key pair for signing in to the EMR (SMART Backend Services, FHIR_AUTH=smart).
  --alg ES384|RS384   signing algorithm: EC P-384 or RSA 3072 (default ES384)
  --out FILE          where the private key (PKCS#8 PEM, mode 0600) is written; never overwritten
                      (default ./fhir-private-key.pem); point FHIR_PRIVATE_KEY_PATH at it
  -h, --help          this text
Prints the public JWKS to register with the EMR (or serve at GET /.well-known/jwks.json).`;

export async function keysCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { alg: { type: 'string' }, out: { type: 'string' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) return print(KEYS_USAGE), 0;
  if (positionals[0] !== 'generate' || positionals.length !== 1) throw new UsageError(KEYS_USAGE);
  const alg = (values.alg ?? 'ES384').toUpperCase();
  if (!(CLIENT_KEY_ALGS as readonly string[]).includes(alg)) throw new UsageError(`--alg must be ES384 or RS384, got ${values.alg}`);
  const out = resolve(values.out ?? 'fhir-private-key.pem');
  const { privatePem, publicJwk } = await generateClientKey(alg as ClientKeyAlg);
  try {
    writePrivateKey(out, privatePem);
  } catch (err) {
    if ((err as { code?: string }).code === 'EEXIST') throw new UsageError(`${out} exists; not overwritten (choose another --out)`);
    throw err;
  }
  process.stderr.write(`private key written to ${out} (mode 0600); kid ${publicJwk.kid}\n`);
  print(JSON.stringify(jwksOf(publicJwk), null, 2));
  return 0;
}
