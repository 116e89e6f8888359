// The value shapes settings share (a bounded integer, a URL, `bundled` or a URL, a comma list), for the
// core schema in config.ts and the EMR modules' own schemas (src/emr/*/settings.ts). Pure zod.
import { z } from 'zod';

export const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max).default(def);

export const optionalUrl = z
  .string()
  .trim()
  .transform((s) => (s === '' ? undefined : s.replace(/\/+$/, '')))
  .pipe(z.url({ protocol: /^https?$/ }).optional())
  .optional();

/** A base URL, or the word `bundled` for the bundled part (the simulator, the FHIR server). */
export const baseUrlOrBundled = z
  .string()
  .trim()
  .transform((s) => (s === '' ? undefined : s.replace(/\/+$/, '')))
  .pipe(z.union([z.literal('bundled'), z.url({ protocol: /^https?$/ })]).optional())
  .optional();

export const csv = z
  .string()
  .optional()
  .transform((s) =>
    (s ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  );

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/** Loopback addresses are exempt from production's https rule (a sidecar, a local proxy). */
export function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return LOOPBACK_HOSTS.includes(host) || host.startsWith('127.');
}
