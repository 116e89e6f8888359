// How the console shows times, durations and states: times in UTC (a hospital's integration team and the
// adapter's logs agree on them), in <time> elements a browser or a screen reader can read.
import { html, type Html } from './html.ts';

export const isoMinute = (ms: number): string => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');

export function when(ms: number | null | undefined): Html {
  if (ms === null || ms === undefined) return html`<span class="muted">—</span>`;
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')}Z</time>`;
}

export function duration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/** A state or status as a badge; the class groups them (good, waiting, bad) for colour, the text says it. */
export function badge(state: string): Html {
  const kind = /^(applied|SENT|ok|sent|true)$/.test(state)
    ? 'good'
    : /^(dead|FAILED|REJECTED|failed|refused|denied|false)$/.test(state)
      ? 'bad'
      : /^(dismissed|discarded_stale|SUPPRESSED|not_found)$/.test(state)
        ? 'quiet'
        : 'wait';
  return html`<span class="badge badge-${kind}">${state}</span>`;
}

/**
 * A time typed in a search form, as UTC: `2026-01-15T10:00` (what a datetime-local input sends), a date, or
 * ISO 8601 with a zone. Undefined when empty or not a time (the form shows it was ignored).
 */
export function parseTimeInput(value: string | undefined): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  const withZone = /[zZ]|[+-]\d\d:?\d\d$/.test(v) ? v : /^\d{4}-\d\d-\d\d$/.test(v) ? `${v}T00:00Z` : `${v}Z`;
  const ms = Date.parse(withZone);
  return Number.isFinite(ms) ? ms : undefined;
}

/** The value a datetime-local input shows for a time (UTC). */
export const timeInputValue = (ms: number | undefined): string => (ms === undefined ? '' : new Date(ms).toISOString().slice(0, 16));
