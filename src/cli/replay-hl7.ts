// `emr-bridge replay` for HL7 v2 samples (`.hl7`): every message goes over MLLP to a listener (by default the
// adapter's own), one at a time, each waiting for its acknowledgment, and is reported with its MSH-9, MSH-10 and
// the acknowledgment code (with the ERR text for AE). It lives in cli/ rather than replay/ because the MLLP client
// is the EMR module's, a layer above replay's (src/layers.ts).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Hl7Message } from '@medplum/core';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { ConfigError } from '../errors.ts';
import { readAck } from '../emr/hl7v2/messages/ack.ts';
import { decodeFrame } from '../emr/hl7v2/mllp/charset.ts';
import { createMllpClient } from '../emr/hl7v2/mllp/client.ts';
import { type MllpEndpoint, parseMllpUrl } from '../emr/hl7v2/mllp/endpoint.ts';
import type { ClientTls } from '../emr/hl7v2/mllp/open-socket.ts';
import { UsageError } from './args.ts';

/** The replay's inputs split by kind: `.hl7` files go over MLLP, everything else to the JSON replay. */
export interface SamplePaths {
  /** In command-line order, each folder's sorted; `named` when given on the command line rather than found in a folder. */
  hl7: { path: string; named: boolean }[];
  /** JSON samples (files and folders) as src/replay/samples.ts takes them. */
  json: string[];
}

/** Folders are walked (sorted, as the JSON samples are); a folder with no JSON sample in it is not handed on. */
export function splitSamplePaths(paths: string[]): SamplePaths {
  const hl7: SamplePaths['hl7'] = [];
  const json: string[] = [];
  const walk = (path: string, named: boolean): boolean => {
    if (!statSync(path).isDirectory()) {
      if (path.endsWith('.hl7')) hl7.push({ path, named });
      return path.endsWith('.json') && !path.endsWith('.schema.json');
    }
    let any = false;
    for (const entry of readdirSync(path).sort()) if (walk(join(path, entry), false)) any = true;
    return any;
  };
  for (const path of paths) {
    const isFile = !statSync(path).isDirectory();
    // A file named on the command line that is not .hl7 goes to the JSON replay, which names it if it is no sample.
    if (walk(path, true) || (isFile && !path.endsWith('.hl7'))) json.push(path);
  }
  return { hl7, json };
}

/** One message of a sample file, as latin1 text: one char per byte, so what goes out is the file's bytes. */
export interface Hl7SampleMessage {
  file: string;
  text: string;
}

/**
 * A file's messages: segments end with CR (LF and CRLF become CR, MLLP frame bytes are dropped), a new message
 * begins at each MSH. Read as latin1 whatever MSH-18 says: the bytes then go out unchanged, a UTF-8 sample's as
 * much as an ISO-8859-1 one's, and MSH-9 and MSH-10 (ASCII in every charset) read the same.
 */
export function readHl7Sample(file: string, root = process.cwd()): Hl7SampleMessage[] {
  const name = relative(root, file);
  let text = readFileSync(file).toString('latin1').replaceAll('\u000b', '').replaceAll('\u001c', '');
  if (text.includes('\n')) text = text.replace(/\r?\n/g, '\r');
  const messages: string[] = [];
  for (const segment of text.split(/(?<=\r)/)) {
    if (segment.trim() === '') continue;
    if (segment.startsWith('MSH')) messages.push(segment);
    else if (messages.length) messages[messages.length - 1] += segment;
    else throw new Error(`${name}: not an HL7 v2 message (the first segment must be MSH)`);
  }
  if (!messages.length) throw new Error(`${name}: no HL7 v2 message in it`);
  return messages.map((m) => ({ file: name, text: m }));
}

/** Where `.hl7` samples go without --mllp: the adapter's own listener, when the settings run the HL7 v2 module. */
export function defaultMllpTarget(config: Config): { url: string; tls: ClientTls; ackTimeoutMs: number } | undefined {
  if (config.emr.protocol !== 'hl7v2') return undefined;
  const { listen, tls, ackTimeoutMs } = config.emr.settings;
  // HL7_LISTEN_PORT=0 names no port another process could find; a wildcard bind is reached on loopback.
  if (listen.port === 0) return undefined;
  const host = listen.host === '0.0.0.0' || listen.host === '::' ? '127.0.0.1' : listen.host;
  return {
    url: `${tls.certPath ? 'mllps' : 'mllp'}://${host.includes(':') ? `[${host}]` : host}:${listen.port}`,
    tls: clientTlsOf(config),
    ackTimeoutMs,
  };
}

/** HL7_TLS_*: for mllps://, the adapter's certificate (a listener that asks for one) and the CA to check the listener with. */
export function clientTlsOf(config: Config): ClientTls {
  if (config.emr.protocol !== 'hl7v2') return {};
  const { certPath, keyPath, caPath } = config.emr.settings.tls;
  const read = (setting: string, path: string | undefined): Buffer | undefined => {
    if (!path) return undefined;
    try {
      return readFileSync(path);
    } catch (err) {
      throw new ConfigError([`${setting}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`]);
    }
  };
  const files = { cert: read('HL7_TLS_CERT_PATH', certPath), key: read('HL7_TLS_KEY_PATH', keyPath), ca: read('HL7_TLS_CA_PATH', caPath) };
  return Object.fromEntries(Object.entries(files).filter(([, v]) => v !== undefined)) as ClientTls;
}

export interface Hl7ReplayOptions {
  files: string[];
  /** mllp://host:port or mllps://host:port. */
  url: string;
  tls?: ClientTls;
  ackTimeoutMs: number;
  out: (line: string) => void;
  clock: Clock;
}

export interface Hl7ReplayRow {
  file: string;
  type: string;
  controlId: string;
  /** MSA-1, or `none` when no acknowledgment came. */
  ack: string;
  /** The ERR text (else MSA-3) of a refusal, or why nothing came back. */
  text?: string;
}

/** `--mllp`'s value read, or the usage error saying what is wrong with it. */
export function checkMllpUrl(url: string): MllpEndpoint {
  try {
    return parseMllpUrl(url);
  } catch (err) {
    throw new UsageError(`--mllp: ${(err as Error).message}`);
  }
}

/** The acknowledgment's text as its MSH-18 says: the connection reads everything as latin1 (see readHl7Sample). */
function decodedAck(ack: Hl7Message): Hl7Message {
  try {
    return Hl7Message.parse(decodeFrame(Buffer.from(ack.toString(), 'latin1')));
  } catch {
    return ack;
  }
}

const mshField = (message: Hl7Message, n: number): string => message.getSegment('MSH')?.getField(n)?.toString() ?? '';

/**
 * Sends every message of `files`, in order, each once the one before was acknowledged; prints a line per message and
 * a count. A failure of the connection itself (no answer in time, refused, closed) ends the run: what follows is
 * counted as not sent, as a listener that did not answer one message would not be asked the next.
 */
export async function replayHl7(opts: Hl7ReplayOptions): Promise<{ rows: Hl7ReplayRow[]; failures: number }> {
  const { label } = checkMllpUrl(opts.url);
  const messages = opts.files.flatMap((f) => readHl7Sample(f));
  const client = createMllpClient({
    url: opts.url,
    ...(opts.tls ? { tls: opts.tls } : {}),
    ackTimeoutMs: opts.ackTimeoutMs,
    // The samples' bytes as they are; see readHl7Sample.
    encoding: 'latin1',
    clock: opts.clock,
  });
  const rows: Hl7ReplayRow[] = [];
  let notSent = 0;
  try {
    for (const [i, m] of messages.entries()) {
      const message = Hl7Message.parse(m.text);
      const row: Hl7ReplayRow = { file: m.file, type: mshField(message, 9), controlId: mshField(message, 10), ack: 'none' };
      try {
        const read = readAck(decodedAck(await client.send(message)));
        if (read.ok) {
          row.ack = read.value.code;
          if (read.value.code !== 'AA' && read.value.text) row.text = read.value.text;
        } else row.text = `not an acknowledgment: ${read.refusal.text}`;
      } catch (err) {
        row.text = (err as Error).message;
        rows.push(row);
        notSent = messages.length - i - 1;
        break;
      }
      rows.push(row);
    }
  } finally {
    await client.close();
  }
  const width = Math.max(4, ...rows.map((r) => r.file.length));
  opts.out(`${'file'.padEnd(width)}  ${'MSH-9'.padEnd(16)}  ${'MSH-10'.padEnd(22)}  ack`);
  for (const r of rows) opts.out(`${r.file.padEnd(width)}  ${r.type.padEnd(16)}  ${r.controlId.padEnd(22)}  ${r.ack}${r.text ? `  ${r.text}` : ''}`);
  const accepted = rows.filter((r) => r.ack === 'AA').length;
  const failures = rows.length - accepted + notSent;
  opts.out(`${accepted} acknowledged AA by ${label}, ${rows.length - accepted} not${notSent ? `, ${notSent} not sent` : ''}`);
  return { rows, failures };
}
