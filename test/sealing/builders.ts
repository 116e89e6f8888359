// Data keys for the sealing tests: a key as its file holds it (its bytes derived from its kid, so a test can
// name the bytes it must never see printed), key files, imported key sets, and a clock on a known day.
import { createHash } from 'node:crypto';
import { createManualClock } from '../../src/clock.ts';
import { type DataKeyJwk, type DataKeySet, importKeySet, parseKeyFile } from '../../src/sealing/keys.ts';

/** 2026-11-25, the day new kids are named after. */
export const clockOn20261125 = () => createManualClock(Date.parse('2026-11-25T09:30:00.000Z'));

/** 32 key bytes of `kid`, base64url: the same kid, the same key. */
export const keyMaterialOf = (kid: string): string => createHash('sha256').update(`key of ${kid}`).digest('base64url');

/** A valid data key named `kid`; `overrides` change (or, as undefined, remove) one member. */
export function keyJwk(kid = 'k-20261101-aaaaaa', overrides: Record<string, unknown> = {}): DataKeyJwk {
  const jwk: Record<string, unknown> = { kty: 'oct', kid, alg: 'dir', k: keyMaterialOf(kid), ...overrides };
  for (const [name, value] of Object.entries(overrides)) if (value === undefined) delete jwk[name];
  return jwk as DataKeyJwk;
}

/** A key file's text holding `keys`, the first current. */
export const keyFileText = (...keys: unknown[]): string => JSON.stringify({ keys });

/** The imported key set of `kids`, the first current. */
export const keySetOf = (...kids: string[]): Promise<DataKeySet> => importKeySet(parseKeyFile(keyFileText(...kids.map((kid) => keyJwk(kid))), 'test'));
