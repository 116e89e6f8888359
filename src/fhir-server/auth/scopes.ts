// SMART system scopes: the v2 (`system/Patient.rs`) and v1 (`system/Patient.read`) grammar, and whether a
// set of scopes grants an interaction or covers a requested scope.

export type Letter = 'c' | 'r' | 'u' | 'd' | 's';

export interface Scope {
  /** As written, e.g. `system/Patient.rs`. */
  text: string;
  /** A resource type, or `*` for every type. */
  type: string;
  letters: ReadonlySet<Letter>;
}

export const ALL_SYSTEM_SCOPES = 'system/*.cruds';

const SCOPE = /^system\/([A-Z][A-Za-z]*|\*)\.([a-z*]+)$/;
const V1_PERMISSIONS: Record<string, string> = { read: 'rs', write: 'cud', '*': 'cruds' };
// v2 letters must appear in this order, each at most once.
const V2_PERMISSIONS = /^(?=.)c?r?u?d?s?$/;

export function parseScope(text: string): Scope | undefined {
  const match = SCOPE.exec(text);
  if (!match) return undefined;
  const [, type, permission] = match as unknown as [string, string, string];
  const letters = V1_PERMISSIONS[permission] ?? (V2_PERMISSIONS.test(permission) ? permission : undefined);
  if (letters === undefined) return undefined;
  return { text, type, letters: new Set(letters.split('') as Letter[]) };
}

/** A space-separated scope string; undefined when any scope in it is not a SMART system scope. */
export function parseScopeList(text: string): Scope[] | undefined {
  const scopes = text.split(/\s+/).filter(Boolean).map(parseScope);
  return scopes.every((s): s is Scope => s !== undefined) ? scopes : undefined;
}

/** Whether the scopes allow `letter` on `type` (`*`: a system-wide interaction, which only `*` scopes allow). */
export function grants(scopes: readonly Scope[], type: string, letter: Letter): boolean {
  return scopes.some((s) => (s.type === '*' || s.type === type) && s.letters.has(letter));
}

/** Whether the allowed scopes cover every letter of the requested scope for its type. */
export function covers(allowed: readonly Scope[], requested: Scope): boolean {
  return [...requested.letters].every((letter) => grants(allowed, requested.type, letter));
}
