// `emr-bridge data-keys generate [--out FILE] [--force] | add [--file FILE]`: the key files that seal patient
// data at rest (src/sealing/). generate makes a JWK Set with one new key, printed or written (mode 0600,
// never over an existing file without --force); add puts a new current key first in an existing file and
// keeps the others, which still open older values. Key material goes only to the file or standard output.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { systemClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { readKeyFileAt, writeKeyFile } from '../sealing/key-source.ts';
import { formatKeyFile, generateKeyFile, withNewCurrentKey } from '../sealing/keys.ts';
import { UsageError, parse, type Values } from './args.ts';
import { reportKeysInUse, rotateDataKeys } from './data-keys-rotate.ts';
import { print } from './output.ts';
import { SPECS } from './specs.ts';

const USAGE = 'usage: data-keys generate [--out FILE] [--force] | data-keys add [--file FILE] | data-keys rotate [--page-size N] | data-keys in-use';

function pageSizeOf(values: Options): number | undefined {
  if (values['page-size'] === undefined) return undefined;
  const n = Number(values['page-size']);
  if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new UsageError('--page-size must be a whole number from 1 to 10000');
  return n;
}
const note = (line: string) => process.stderr.write(`${line}\n`);
type Options = Values<(typeof SPECS)['data-keys']['options']>;

function generate(values: Options): number {
  if (values.file !== undefined) throw new UsageError('--file goes with add; generate writes to --out');
  const file = generateKeyFile(systemClock);
  const kid = file.keys[0].kid;
  if (values.out === undefined) {
    if (values.force) throw new UsageError('--force goes with --out');
    process.stdout.write(formatKeyFile(file));
    note(`a new data key file (current key ${kid}) on standard output: keep it readable by its owner only (mode 0600)`);
    return 0;
  }
  const out = resolve(values.out);
  try {
    writeKeyFile(out, file, { overwrite: values.force === true });
  } catch (err) {
    if ((err as { code?: string }).code === 'EEXIST')
      throw new UsageError(`${out} exists; not overwritten (its keys may be the only way to open stored values; --force replaces it)`);
    throw err;
  }
  note(`data key file written to ${out} (mode 0600); current key ${kid}. Point DATA_KEYS_PATH at it, and keep a copy where backups of the data are not.`);
  print(kid);
  return 0;
}

/** The file `add` works on: --file, else DATA_KEYS_PATH, else the zero-configuration file. */
function fileToAddTo(values: Options): string {
  if (values.file !== undefined) return resolve(values.file);
  const { source } = loadConfig({}, 'tools').dataKeys;
  if (source.kind === 'path' || source.kind === 'generated') return source.path;
  if (source.kind === 'command')
    throw new UsageError('the data keys come from DATA_KEYS_COMMAND: name the key file with --file (then store it where the command reads it)');
  throw new UsageError('no data key file is configured: name it with --file, or set DATA_KEYS_PATH');
}

function add(values: Options): number {
  if (values.out !== undefined || values.force) throw new UsageError('--out and --force go with generate; add rewrites --file');
  const path = fileToAddTo(values);
  if (!existsSync(path)) throw new UsageError(`no key file at ${path}; make one with data-keys generate --out ${path}`);
  const before = readKeyFileAt(path, 'the key file');
  const after = withNewCurrentKey(before, systemClock);
  writeKeyFile(path, after, { overwrite: true });
  const kid = after.keys[0].kid;
  note(`key ${kid} added to ${path} as the current key; ${before.keys.map((k) => k.kid).join(', ')} still open older values.`);
  note('The adapter reads its keys at start: give every replica the new file, then restart them; new values are sealed under the new key.');
  print(kid);
  return 0;
}

export async function dataKeysCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPECS['data-keys']);
  if (positionals.length === 1 && positionals[0] === 'generate') return generate(values);
  if (positionals.length === 1 && positionals[0] === 'add') return add(values);
  if (positionals.length === 1 && positionals[0] === 'rotate') return rotateDataKeys(pageSizeOf(values));
  if (positionals.length === 1 && positionals[0] === 'in-use') return reportKeysInUse();
  throw new UsageError(USAGE);
}
