// The sealer the settings ask for, built once at start: the key file read from its source and imported, then
// a sealer that seals (DATA_ENCRYPTION=on) or writes in clear while still opening what its keys sealed.
import type { Clock } from '../clock.ts';
import { type KeyCommandOptions, readDataKeyFile } from './key-source.ts';
import { importKeySet } from './keys.ts';
import { createClearSealer, createSealer, type Sealer } from './sealer.ts';
import type { DataKeysSettings } from './settings.ts';

/** Reads the data keys of `settings` (throws DataKeysError when they cannot be used) and makes the sealer. */
export async function loadSealer(settings: DataKeysSettings, options: KeyCommandOptions & { clock?: Clock } = {}): Promise<Sealer> {
  const file = await readDataKeyFile(settings.source, options);
  const keys = file ? await importKeySet(file) : undefined;
  if (settings.encryption === 'off') return createClearSealer(keys);
  if (!keys) throw new Error('DATA_ENCRYPTION=on with no data key source: the settings should have refused this');
  return createSealer(keys);
}
