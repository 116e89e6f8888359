// Where the package's own files live, whether run from src/ through tsx or from a copy in a container.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The adapter's migrations. */
export const ADAPTER_MIGRATIONS = join(PACKAGE_ROOT, 'db');
/** The bundled simulator's own migrations (its state is a separate database). */
export const SIMULATOR_MIGRATIONS = join(PACKAGE_ROOT, 'db', 'simulator');
export const SAMPLES_DIR = join(PACKAGE_ROOT, 'samples');
