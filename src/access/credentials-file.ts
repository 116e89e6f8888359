// ADMIN_CREDENTIALS_FILE: the named admin credentials, a JSON array of {"name", "role", "sha256"} where sha256
// is the hex SHA-256 of the token (the token itself is shown once by `emr-bridge credentials add` and never
// stored). Read and checked once at start: a file that cannot be read, is not such an array, repeats a name or
// a token, names an unknown role or holds a digest that is not 64 hex digits stops start-up with a ConfigError
// naming the setting, before anything is written. Written only by the CLI: whole, mode 0600, by rename.
import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../errors.ts';
import { ADMIN_TOKEN_NAME, type NamedCredential, SHA256_HEX } from './credentials.ts';

export const CREDENTIALS_SETTING = 'ADMIN_CREDENTIALS_FILE';

/** A credential's name: what the audit trail shows. A role or a desk (`night-desk`), never a patient's anything. */
export const CREDENTIAL_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const entrySchema = z.strictObject({
  name: z.string().regex(CREDENTIAL_NAME, 'letters, digits, dot, underscore or hyphen, 1 to 64, starting with a letter or digit'),
  role: z.enum(['viewer', 'operator']),
  sha256: z.string().regex(SHA256_HEX, 'the hex SHA-256 of the token: exactly 64 hex digits'),
});

/** The credentials in `text`; every problem, each naming the entry (never a digest). */
export function parseCredentials(text: string, where: string): { credentials: NamedCredential[]; problems: string[] } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { credentials: [], problems: [`${CREDENTIALS_SETTING}: ${where} is not JSON`] };
  }
  if (!Array.isArray(data)) return { credentials: [], problems: [`${CREDENTIALS_SETTING}: ${where} must hold a JSON array of {"name", "role", "sha256"}`] };
  const problems: string[] = [];
  const credentials: NamedCredential[] = [];
  const names = new Set<string>();
  const digests = new Set<string>();
  data.forEach((raw, i) => {
    const r = entrySchema.safeParse(raw);
    const label = `${CREDENTIALS_SETTING}: ${where} entry ${i + 1}`;
    if (!r.success) {
      const issue = r.error.issues[0]!;
      problems.push(`${label}: ${issue.path.join('.') || 'entry'}: ${issue.message}`);
      return;
    }
    const c = { ...r.data, sha256: r.data.sha256.toLowerCase() };
    if (c.name === ADMIN_TOKEN_NAME) problems.push(`${label}: ${ADMIN_TOKEN_NAME} is the name ADMIN_TOKEN signs in as; choose another`);
    else if (names.has(c.name)) problems.push(`${label}: the name ${c.name} is used twice`);
    else if (digests.has(c.sha256)) problems.push(`${label} (${c.name}): the same token as another credential`);
    names.add(c.name);
    digests.add(c.sha256);
    credentials.push(c);
  });
  return { credentials, problems };
}

/** Reads and checks the file at start-up; throws ConfigError naming ADMIN_CREDENTIALS_FILE. */
export function loadCredentialsFile(path: string): NamedCredential[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError([`${CREDENTIALS_SETTING}: cannot read ${path} (${(err as { code?: string }).code ?? (err as Error).message})`]);
  }
  const { credentials, problems } = parseCredentials(text, path);
  if (problems.length) throw new ConfigError(problems);
  return credentials;
}

/** Writes the whole file, mode 0600, through a temporary file renamed over it (never half-written). */
export function writeCredentialsFile(path: string, credentials: readonly NamedCredential[]): void {
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  writeFileSync(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
}
