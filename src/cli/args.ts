// How every command reads its arguments: node:util parseArgs, strict, over the command's spec (src/cli/
// specs.ts). `--help`/`-h` on any command prints its usage; an unknown option is a UsageError that the
// CLI answers with the usage and exit 2.
import { parseArgs } from 'node:util';
import { AppError } from '../errors.ts';
import type { CommandSpec, OptionSpec } from './specs.ts';

export class UsageError extends AppError {
  constructor(message: string) {
    super({ code: 'usage', status: 400, message });
  }
}

/** `--help` was asked for: the CLI prints the command's usage and exits 0. */
export class HelpRequested extends Error {
  constructor(readonly spec: CommandSpec) {
    super('help');
  }
}

type ValueOf<O extends OptionSpec> = O['type'] extends 'boolean' ? boolean : O['multiple'] extends true ? string[] : string;
export type Values<Options extends Record<string, OptionSpec>> = { [K in keyof Options]?: ValueOf<Options[K]> };

export function parse<S extends CommandSpec>(argv: string[], spec: S): { values: Values<S['options']>; positionals: string[] } {
  const options = Object.fromEntries(
    Object.entries({ ...spec.options, help: { type: 'boolean', short: 'h', help: 'this text' } } as Record<string, OptionSpec>).map(([name, o]) => [
      name,
      { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) },
    ]),
  );
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (parsed.values.help) throw new HelpRequested(spec);
  return { values: parsed.values as Values<S['options']>, positionals: parsed.positionals };
}

/** A whole number from `min` to `max` given to `--<name>` (undefined when it is absent); else a usage error naming it. */
export function wholeNumberOption(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  // No more digits than `max` has: a value padded with zeros is refused, as a mistyped one would be.
  const n = value.length <= String(max).length && /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(n >= min && n <= max)) throw new UsageError(`--${name} must be ${min}..${max}, got ${value}`);
  return n;
}

export function portOption(value: string | undefined): string | undefined {
  wholeNumberOption('port', value, 0, 65535);
  return value;
}
