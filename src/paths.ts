// Where the package's own files live, whether run from src/ through tsx or from a copy in a container.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

export const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The adapter's migrations for SQLite (its default store). */
export const ADAPTER_MIGRATIONS = join(PACKAGE_ROOT, 'db', 'sqlite');
/** The adapter's migrations for PostgreSQL (DATABASE_URL): the same final schema in PostgreSQL's types. */
export const POSTGRES_MIGRATIONS = join(PACKAGE_ROOT, 'db', 'postgres');
/** The bundled simulator's own migrations (its state is a separate database). */
export const SIMULATOR_MIGRATIONS = join(PACKAGE_ROOT, 'db', 'simulator');
export const SAMPLES_DIR = join(PACKAGE_ROOT, 'samples');
