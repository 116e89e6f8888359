// Who may use the admin surface: ADMIN_TOKEN as the operator `admin`, and the named credentials of
// ADMIN_CREDENTIALS_FILE (./credentials-file.ts), each a name, a role and the SHA-256 of its token (tokens are
// never stored in clear). A presented token is hashed and compared with every credential's digest in constant
// time, all of them each time, so neither the answer's time nor its content says which one came close.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Actor, CredentialCheck, Role } from '../actor.ts';

/** The name ADMIN_TOKEN signs in as. */
export const ADMIN_TOKEN_NAME = 'admin';

export interface NamedCredential {
  name: string;
  role: Role;
  /** Lower-case hex SHA-256 of the token's UTF-8 bytes. */
  sha256: string;
}

/** A SHA-256 digest in hex: 64 digits, nothing shorter (a truncated hash would be easier to match). */
export const SHA256_HEX = /^[0-9a-f]{64}$/i;

export const sha256Hex = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export function createCredentialCheck(opts: { adminToken?: string | undefined; credentials: readonly NamedCredential[] }): CredentialCheck & {
  /** The credentials' names and roles (never their digests), ADMIN_TOKEN's first. */
  list(): Actor[];
} {
  const known: { actor: Actor; digest: Buffer }[] = [];
  if (opts.adminToken) known.push({ actor: { name: ADMIN_TOKEN_NAME, role: 'operator' }, digest: digest(opts.adminToken) });
  for (const c of opts.credentials) {
    if (!SHA256_HEX.test(c.sha256)) throw new Error(`credential ${c.name}: sha256 must be 64 hex digits`);
    known.push({ actor: { name: c.name, role: c.role }, digest: Buffer.from(c.sha256, 'hex') });
  }
  return {
    verify(token) {
      if (!token) return undefined;
      const presented = digest(token);
      let found: Actor | undefined;
      // Every digest is compared, a match or not: the time taken does not depend on which one matched.
      for (const k of known) if (timingSafeEqual(presented, k.digest) && !found) found = k.actor;
      return found && { ...found };
    },
    list: () => known.map((k) => ({ ...k.actor })),
  };
}
