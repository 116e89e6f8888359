// Segments from plain values: every leaf is escaped here, once, so a builder never writes a separator by
// accident and never escapes twice. Hl7Field is given its components directly (not text to re-split).
import { Hl7Context, Hl7Field, Hl7Message, Hl7Segment } from '@medplum/core';
import { escapeValue } from './escape.ts';

export const DEFAULT_CONTEXT = new Hl7Context();

/** One component's plain value; undefined or '' leaves it empty. */
export type Component = string | undefined;
/** A field: one value, its components in order (1-based in HL7, 0-based here), or several repetitions of them. */
export type FieldValue = Component | readonly Component[] | { repeat: readonly (readonly Component[])[] };

function trimEnd<T>(items: T[], empty: (t: T) => boolean): T[] {
  let n = items.length;
  while (n > 0 && empty(items[n - 1]!)) n--;
  return items.slice(0, n);
}

function fieldOf(value: FieldValue, ctx: Hl7Context): Hl7Field {
  const reps: readonly (readonly Component[])[] =
    value === undefined || typeof value === 'string' ? [[value]] : 'repeat' in value ? value.repeat : [value as readonly Component[]];
  const components = reps.map((rep) => {
    const escaped = trimEnd(
      rep.map((c) => escapeValue(c ?? '', ctx)),
      (c) => c === '',
    );
    return escaped.length ? escaped : [''];
  });
  return new Hl7Field(components.length ? components : [['']], ctx);
}

/** Fields named by their HL7 position (1-based), for a segment whose few fields lie far apart (SCH). */
export function at(byPosition: Record<number, FieldValue>): FieldValue[] {
  const last = Math.max(0, ...Object.keys(byPosition).map(Number));
  return Array.from({ length: last }, (_, i) => byPosition[i + 1]);
}

/** A segment whose fields are given from position 1; trailing empty fields are left off. */
export function segment(name: string, fields: readonly FieldValue[], ctx: Hl7Context = DEFAULT_CONTEXT): Hl7Segment {
  const built = trimEnd(
    fields.map((f) => fieldOf(f, ctx)),
    (f) => f.toString() === '',
  );
  return new Hl7Segment([new Hl7Field([[name]], ctx), ...built], ctx);
}

/**
 * MSH, whose first two fields are the separators themselves: fields are given from MSH-3. Only the
 * encoding characters are written raw; everything else goes through segment()'s escaping.
 */
export function mshSegment(fromMsh3: readonly FieldValue[], ctx: Hl7Context = DEFAULT_CONTEXT): Hl7Segment {
  const rest = segment('MSH', fromMsh3, ctx).fields.slice(1);
  return new Hl7Segment([new Hl7Field([['MSH']], ctx), new Hl7Field([[ctx.getMsh2()]], ctx), ...rest], ctx);
}

/** A built message and its wire text (segments separated by CR, no trailing CR; MLLP framing is the transport's). */
export interface BuiltMessage {
  message: Hl7Message;
  text: string;
}

export function built(segments: Hl7Segment[], ctx: Hl7Context = DEFAULT_CONTEXT): BuiltMessage {
  const message = new Hl7Message(segments, ctx);
  return { message, text: message.toString() };
}
