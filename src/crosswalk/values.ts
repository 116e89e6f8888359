// What a crosswalk entry may hold, checked the same way wherever one comes in (the admin API, a CSV line, the
// CLI): an entity type of the crosswalk's, and ids that are short, not empty, and free of control characters.
import { CROSSWALK_ENTITY_TYPES, type CrosswalkEntityType } from '../storage/crosswalk.ts';

export const SERVICE_ID_MAX = 200;
export const EMR_ID_MAX = 200;

/** The problem with an id, or undefined when it will do. */
export function idProblem(name: 'serviceId' | 'emrId', value: string, max: number): string | undefined {
  if (value.length === 0) return `${name} is empty`;
  if (value.length > max) return `${name} is longer than ${max} characters`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused here.
  if (/[\u0000-\u001f\u007f]/.test(value)) return `${name} holds a control character`;
  if (value.trim() !== value) return `${name} starts or ends with a space`;
  return undefined;
}

export const isCrosswalkEntityType = (t: string): t is CrosswalkEntityType => (CROSSWALK_ENTITY_TYPES as readonly string[]).includes(t);
