// Marker strings for patient data, and a scan of raw bytes for them: the proof that nothing emr-bridge writes
// (a database file, its WAL, a backup, a PostgreSQL data folder, a dump) holds patient data in clear
// (CONTRACT section 7, issue 24). Each run makes markers of its own (random, so no earlier run's bytes can
// match), puts them where patient data goes (names, phones, notes, labels, the bytes of a PDF), then scans.
//
// A marker is looked for in every form a stored value may take: its own bytes (text columns, BLOBs, JSON), its
// hexadecimal (PostgreSQL prints bytea as \x…), and base64 and base64url at each of the three alignments (a
// PDF's bytes inside a request's `file.base64`). A hit names the file, the marker's role and the form found.
import { randomInt } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What a marker stands for: where patient data is put. */
export type MarkerRole = 'patient name' | 'patient phone' | 'appointment notes' | 'doctor name' | 'document label' | 'PDF bytes';

export interface Marker {
  role: MarkerRole;
  /** The text put into the data (the phone as given: +1555…). */
  value: string;
}

export interface Hit {
  /** The file or dump the marker was found in. */
  source: string;
  role: MarkerRole;
  marker: string;
  /** How it was found: as its own bytes, in hex, or in base64/base64url. */
  form: string;
  offset: number;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** 16 random lowercase letters: unlike anything else stored, and sharing no prefix with another marker. */
export const randomWord = (length = 16): string => Array.from({ length }, () => LETTERS[randomInt(LETTERS.length)]).join('');

/** A phone number no other run uses: +1555 and 7 random digits. */
export const randomPhone = (): string => `+1555${String(randomInt(10_000_000)).padStart(7, '0')}`;

/** A small PDF whose bytes carry `marker` (in a comment line: a valid PDF all the same). */
export const pdfWithMarker = (marker: string): Buffer => Buffer.from(`%PDF-1.4\n%${marker}\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n`);

/** The characters of base64(prefix + bytes) that depend only on `bytes`, for each alignment of `bytes` (0, 1, 2 bytes in). */
function base64Forms(bytes: Buffer): { form: string; text: string }[] {
  const out: { form: string; text: string }[] = [];
  for (let k = 0; k < 3; k++) {
    const encoded = Buffer.concat([Buffer.alloc(k), bytes])
      .toString('base64')
      .replace(/=+$/, '');
    const text = encoded.slice(Math.ceil((k * 8) / 6), Math.floor(((k + bytes.length) * 8) / 6));
    out.push({ form: `base64@${k}`, text });
    const url = text.replace(/\+/g, '-').replace(/\//g, '_');
    if (url !== text) out.push({ form: `base64url@${k}`, text: url });
  }
  return out;
}

interface Needle {
  bytes: Buffer;
  marker: Marker;
  form: string;
}

/** Every form a marker is looked for in. A phone is also looked for without its + (555 and its 7 digits). */
function needlesOf(marker: Marker): Needle[] {
  const texts = marker.role === 'patient phone' ? [marker.value, marker.value.replace(/^\+1/, '')] : [marker.value];
  const needles: Needle[] = [];
  for (const text of texts) {
    const raw = Buffer.from(text, 'utf8');
    needles.push({ bytes: raw, marker, form: 'bytes' });
    needles.push({ bytes: Buffer.from(raw.toString('hex')), marker, form: 'hex' });
    needles.push({ bytes: Buffer.from(raw.toString('hex').toUpperCase()), marker, form: 'HEX' });
    for (const b of base64Forms(raw)) needles.push({ bytes: Buffer.from(b.text), marker, form: b.form });
  }
  return needles;
}

/**
 * A scanner for a set of markers: one pass over each buffer, looking up the 4 bytes at each offset among the
 * needles' first 4 bytes (a few hundred needles over a data folder of tens of megabytes stays in seconds).
 */
export function markerScanner(markers: readonly Marker[]) {
  const needles = markers.flatMap(needlesOf);
  const byPrefix = new Map<number, Needle[]>();
  for (const n of needles) {
    if (n.bytes.length < 8) throw new Error(`marker form too short to scan for: ${n.form} of ${n.marker.value}`);
    const key = n.bytes.readUInt32LE(0);
    byPrefix.set(key, [...(byPrefix.get(key) ?? []), n]);
  }

  function scanBuffer(source: string, buf: Buffer): Hit[] {
    const hits: Hit[] = [];
    const end = buf.length - 3;
    for (let i = 0; i < end; i++) {
      const candidates = byPrefix.get(buf.readUInt32LE(i));
      if (!candidates) continue;
      for (const n of candidates) {
        if (i + n.bytes.length <= buf.length && buf.compare(n.bytes, 0, n.bytes.length, i, i + n.bytes.length) === 0)
          hits.push({ source, role: n.marker.role, marker: n.marker.value, form: n.form, offset: i });
      }
    }
    return hits;
  }

  return {
    needles: needles.length,
    scanBuffer,
    /** Scans each file as it is on disk now (a file gone meanwhile is skipped: a WAL removed at close). */
    scanFiles(files: readonly string[]): { hits: Hit[]; scanned: { file: string; bytes: number }[] } {
      const hits: Hit[] = [];
      const scanned: { file: string; bytes: number }[] = [];
      for (const file of files) {
        let buf: Buffer;
        try {
          buf = readFileSync(file);
        } catch (err) {
          if ((err as { code?: string }).code === 'ENOENT') continue;
          throw err;
        }
        scanned.push({ file, bytes: buf.length });
        hits.push(...scanBuffer(file, buf));
      }
      return { hits, scanned };
    },
  };
}

/** Every regular file under `dir`, recursively. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else if (entry.isFile()) out.push(path);
    else if (entry.isSymbolicLink() && statSync(path, { throwIfNoEntry: false })?.isFile()) out.push(path);
  }
  return out;
}

/** Hits summed up for an assertion message: one line per source, role and form. */
export function describeHits(hits: readonly Hit[]): string {
  const lines = new Map<string, number>();
  for (const h of hits) {
    const line = `${h.source}: ${h.role} (${h.marker}) as ${h.form}`;
    lines.set(line, (lines.get(line) ?? 0) + 1);
  }
  return [...lines].map(([line, n]) => `${line}${n > 1 ? ` ×${n}` : ''}`).join('\n');
}

/** The roles found among the hits. */
export const rolesFound = (hits: readonly Hit[]): Set<MarkerRole> => new Set(hits.map((h) => h.role));
