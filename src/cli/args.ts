// Small helpers over node:util parseArgs shared by the commands.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { AppError } from '../errors.ts';

export class UsageError extends AppError {
  constructor(message: string) {
    super({ code: 'usage', status: 400, message });
  }
}

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function portOption(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new UsageError(`--port must be 0..65535, got ${value}`);
  return value;
}
