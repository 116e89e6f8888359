// Secrets from files: `<NAME>_FILE` holds the path of a file whose content is the secret NAME (the convention
// of the official PostgreSQL image, Docker secrets and Kubernetes secret volumes), so the secret never shows
// in `docker inspect` or a process listing. A step before parseConfig: it takes the raw settings and a file
// reader and gives back the settings with each file read in, plus one problem per setting it could not read.
// It never puts a secret into a message, only setting names and paths.
import { readFileSync } from 'node:fs';

/** Reads a secret's file; throws the file system's error (its `code` is all that is used). */
export type SecretFileReader = (path: string) => string;

export const readSecretFile: SecretFileReader = (path) => readFileSync(path, 'utf8');

export const fileSetting = (name: string): string => `${name}_FILE`;

export interface ResolvedSecrets {
  /** The settings with every `<NAME>_FILE` of `names` removed and its file's content given as NAME. */
  env: Record<string, string | undefined>;
  /** One line per setting whose file could not be used, as `NAME_FILE: …` (ConfigError lines). */
  problems: string[];
  /** The secrets those problems are about: their other messages would follow from the first. */
  failed: string[];
}

/** An empty value means unset, as parseConfig has it (`ADMIN_TOKEN= npm start`). */
const isSet = (value: string | undefined): value is string => value !== undefined && value.trim() !== '';

/** The file's content with one trailing newline (`\n` or `\r\n`) removed: `echo secret > file` holds `secret`. */
export const withoutTrailingNewline = (content: string): string => content.replace(/\r?\n$/, '');

const REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  ENOTDIR: 'no such file',
  EISDIR: 'is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

/** Why a file could not be read, from the error's code alone (never its message, which a reader may fill). */
function reason(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return 'unreadable';
  return REASONS[code] ?? `unreadable (${code})`;
}

/**
 * Reads the file of every `<NAME>_FILE` among `names`' variants. NAME and NAME_FILE together is a problem
 * naming both; so is a file that cannot be read (naming the path and why) or that is empty.
 */
export function resolveSecretFiles(
  env: Record<string, string | undefined>,
  names: readonly string[],
  readFile: SecretFileReader = readSecretFile,
): ResolvedSecrets {
  const out = { ...env };
  const problems: string[] = [];
  const failed: string[] = [];
  for (const name of names) {
    const fileName = fileSetting(name);
    const path = env[fileName];
    delete out[fileName];
    if (!isSet(path)) continue;
    const fail = (problem: string) => {
      problems.push(problem);
      failed.push(name);
      delete out[name];
    };
    if (isSet(env[name])) {
      fail(`${name}, ${fileName}: both are set; set one of the two (${fileName} holds the path of a file with the value)`);
      continue;
    }
    let content: string;
    try {
      content = readFile(path);
    } catch (err) {
      fail(`${fileName}: cannot read ${path}: ${reason(err)}`);
      continue;
    }
    const value = withoutTrailingNewline(content);
    if (value.trim() === '') fail(`${fileName}: ${path} is empty`);
    else out[name] = value;
  }
  return { env: out, problems, failed };
}

/**
 * Settings from several sources, each winning over those before it (.env, then the environment, then the
 * command line). NAME and NAME_FILE are one setting here: the environment's ADMIN_TOKEN_FILE replaces the
 * .env file's ADMIN_TOKEN rather than meet it as a conflict.
 */
export function overlaySettings(layers: readonly Record<string, string | undefined>[], names: readonly string[]): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const layer of layers) {
    const given = Object.fromEntries(Object.entries(layer).filter(([, v]) => v !== undefined));
    for (const name of names) {
      if (name in given || fileSetting(name) in given) {
        delete out[name];
        delete out[fileSetting(name)];
      }
    }
    Object.assign(out, given);
  }
  return out;
}
