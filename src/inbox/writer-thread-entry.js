// Worker threads do not inherit tsx's loader from the main thread, so the writer thread registers it
// itself before loading its TypeScript.
import { register } from 'tsx/esm/api';

register();
await import('./writer-thread.ts');
