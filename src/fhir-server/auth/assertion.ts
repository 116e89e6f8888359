// Checks a SMART Backend Services client assertion (RFC 7523 private_key_jwt) with jose: algorithm and
// kid, the client's registered keys, iss/sub/aud, a short exp by the injected clock, and a fresh jti.
import { decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import type { Clock } from '../../clock.ts';
import type { ClientRegistry, RegisteredClient } from './clients.ts';
import type { JtiLedger } from './jti-ledger.ts';

export const ASSERTION_ALGORITHMS = ['RS384', 'ES384'];
const MAX_ASSERTION_LIFETIME_SECONDS = 300;

/** The assertion does not authenticate the client: answered 401 invalid_client. */
export class AssertionRefused extends Error {
  constructor(
    message: string,
    /** Known only once the unverified `iss` names a registered client; for the logs. */
    readonly clientId?: string,
  ) {
    super(message);
  }
}

export interface AssertionVerifierOptions {
  tokenUrl: string;
  clock: Clock;
  clients: ClientRegistry;
  jtis: JtiLedger;
}

export type AssertionVerifier = (assertion: string) => Promise<RegisteredClient>;

function checkHeader(assertion: string): void {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(assertion);
  } catch {
    throw new AssertionRefused('client_assertion is not a JWT');
  }
  if (!header.alg || !ASSERTION_ALGORITHMS.includes(header.alg)) throw new AssertionRefused(`alg must be one of ${ASSERTION_ALGORITHMS.join(', ')}`);
  if (typeof header.kid !== 'string' || header.kid === '') throw new AssertionRefused('the assertion header has no kid');
}

// The issuer is read before the signature is checked only to pick whose keys to check it with.
function claimedClient(assertion: string, clients: ClientRegistry): RegisteredClient {
  let iss: unknown;
  try {
    iss = decodeJwt(assertion).iss;
  } catch {
    throw new AssertionRefused('client_assertion is not a JWT');
  }
  const client = typeof iss === 'string' ? clients.get(iss) : undefined;
  if (!client) throw new AssertionRefused('unknown client');
  return client;
}

async function verifiedClaims(assertion: string, client: RegisteredClient, opts: AssertionVerifierOptions): Promise<JWTPayload> {
  try {
    const { payload } = await jwtVerify(assertion, client.keys, {
      algorithms: ASSERTION_ALGORITHMS,
      issuer: client.clientId,
      subject: client.clientId,
      audience: opts.tokenUrl,
      requiredClaims: ['exp', 'jti'],
      currentDate: new Date(opts.clock.now()),
    });
    return payload;
  } catch (err) {
    throw new AssertionRefused(`assertion refused: ${(err as Error).message}`, client.clientId);
  }
}

function checkLifetimeAndAudience(payload: JWTPayload, client: RegisteredClient, opts: AssertionVerifierOptions): void {
  // jose accepts an audience list that merely contains the token URL; SMART wants the token URL itself.
  const aud = Array.isArray(payload.aud) && payload.aud.length === 1 ? payload.aud[0] : payload.aud;
  if (aud !== opts.tokenUrl) throw new AssertionRefused('aud must be the token URL', client.clientId);
  const secondsLeft = (payload.exp as number) - opts.clock.now() / 1000;
  if (secondsLeft > MAX_ASSERTION_LIFETIME_SECONDS) {
    throw new AssertionRefused(`exp is more than ${MAX_ASSERTION_LIFETIME_SECONDS} s ahead`, client.clientId);
  }
}

function claimJti(payload: JWTPayload, client: RegisteredClient, jtis: JtiLedger): void {
  if (typeof payload.jti !== 'string' || payload.jti === '') throw new AssertionRefused('jti missing', client.clientId);
  if (!jtis.claim(client.clientId, payload.jti, (payload.exp as number) * 1000)) {
    throw new AssertionRefused('jti already used', client.clientId);
  }
}

export function createAssertionVerifier(opts: AssertionVerifierOptions): AssertionVerifier {
  return async (assertion) => {
    checkHeader(assertion);
    const client = claimedClient(assertion, opts.clients);
    const payload = await verifiedClaims(assertion, client, opts);
    checkLifetimeAndAudience(payload, client, opts);
    claimJti(payload, client, opts.jtis);
    return client;
  };
}
