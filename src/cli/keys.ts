// `emr-bridge keys generate [--alg ES384|RS384] [--out FILE]`: a new key pair for SMART Backend Services.
// The private key goes to FILE (mode 0600, never overwritten); the public JWKS, to register with the
// EMR's authorization server, goes to standard output.
import { resolve } from 'node:path';
import { CLIENT_KEY_ALGS, generateClientKey, jwksOf, writePrivateKey, type ClientKeyAlg } from '../emr/fhir/auth/keys.ts';
import { UsageError, parse } from './args.ts';
import { SPECS } from './specs.ts';
import { print } from './output.ts';

export async function keysCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPECS.keys);
  if (positionals[0] !== 'generate' || positionals.length !== 1) throw new UsageError('the one verb is generate');
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
