// `emr-bridge credentials add <name> --role viewer|operator | list | remove <name> [--file FILE]`: the named
// admin credentials of ADMIN_CREDENTIALS_FILE. `add` makes a random token (32 bytes, base64url), prints it
// once on standard output and keeps only its SHA-256 in the file (written whole, mode 0600); adding a name
// that exists gives it a new token (the old one stops working). `list` shows names and roles, never hashes.
// The adapter reads the file at start: restart it after a change.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ADMIN_TOKEN_NAME, type NamedCredential, sha256Hex } from '../access/credentials.ts';
import { CREDENTIAL_NAME, CREDENTIALS_SETTING, parseCredentials, writeCredentialsFile } from '../access/credentials-file.ts';
import type { Role } from '../actor.ts';
import { type Config, loadConfig } from '../config.ts';
import { ConfigError } from '../errors.ts';
import { UsageError, parse } from './args.ts';
import { print } from './output.ts';
import { SPECS } from './specs.ts';

export const DEFAULT_CREDENTIALS_FILE = 'admin-credentials.json';
const USAGE = 'usage: credentials add <name> --role viewer|operator | credentials list | credentials remove <name>';
const note = (line: string) => process.stderr.write(`${line}\n`);

/** The file's credentials; none when it does not exist yet. A file that is not valid is refused, unchanged. */
function readFile(path: string): NamedCredential[] {
  if (!existsSync(path)) return [];
  const { credentials, problems } = parseCredentials(readFileSync(path, 'utf8'), path);
  if (problems.length) throw new ConfigError([...problems, `${path} was left unchanged`]);
  return credentials;
}

function reminder(config: Config, path: string): void {
  if (config.adminCredentialsFile === path) note('The adapter reads the file at start: restart it for the change to apply.');
  else note(`The adapter reads this file only with ${CREDENTIALS_SETTING}=${path} set (then restart it).`);
}

function add(config: Config, path: string, name: string, role: string | undefined): number {
  if (role !== 'viewer' && role !== 'operator') throw new UsageError('--role must be viewer or operator');
  if (!CREDENTIAL_NAME.test(name)) throw new UsageError('the name takes letters, digits, dot, underscore or hyphen, 1 to 64, starting with a letter or digit');
  if (name === ADMIN_TOKEN_NAME) throw new UsageError(`${ADMIN_TOKEN_NAME} is the name ADMIN_TOKEN signs in as; choose another`);
  const credentials = readFile(path);
  const token = randomBytes(32).toString('base64url');
  const entry: NamedCredential = { name, role: role as Role, sha256: sha256Hex(token) };
  const replaced = credentials.some((c) => c.name === name);
  mkdirSync(dirname(path), { recursive: true });
  writeCredentialsFile(path, replaced ? credentials.map((c) => (c.name === name ? entry : c)) : [...credentials, entry]);
  note(`credential ${name} (${role}) ${replaced ? 'given a new token (the old one no longer works)' : 'added'} in ${path}`);
  note('Its token follows, shown this once (only its hash is kept): give it to its holder now.');
  print(token);
  reminder(config, path);
  return 0;
}

function list(config: Config, path: string): number {
  if (config.adminToken) print(`${ADMIN_TOKEN_NAME.padEnd(24)} operator  (ADMIN_TOKEN)`);
  if (!existsSync(path)) note(`no credentials file at ${path}`);
  for (const c of readFile(path)) print(`${c.name.padEnd(24)} ${c.role}`);
  return 0;
}

function remove(config: Config, path: string, name: string): number {
  const credentials = readFile(path);
  if (!credentials.some((c) => c.name === name)) throw new UsageError(`no credential named ${name} in ${path}`);
  writeCredentialsFile(
    path,
    credentials.filter((c) => c.name !== name),
  );
  note(`credential ${name} removed from ${path}`);
  reminder(config, path);
  return 0;
}

export async function credentialsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPECS.credentials);
  const config = loadConfig();
  const path = resolve(values.file ?? config.adminCredentialsFile ?? join(config.dataDir, DEFAULT_CREDENTIALS_FILE));
  const [verb, name, ...rest] = positionals;
  if (rest.length === 0 && verb === 'add' && name) return add(config, path, name, values.role);
  if (rest.length === 0 && verb === 'remove' && name) return remove(config, path, name);
  if (verb === 'list' && !name) return list(config, path);
  throw new UsageError(USAGE);
}
