// The document store's requests at rest, on both engines (CONTRACT section 7): a request is stored sealed for
// its row, naming none of the patient's name, phone, the label or the file, and opens whole; with the clear
// sealer (DATA_ENCRYPTION=off) it is stored as it is (so the same scan finds the markers: the scan works); a
// request written in clear before sealing still opens; a request that does not open (moved to another row,
// sealed under a key this store lacks, truncated) is a named error from requestOf, never a wrong request. And
// once a document is final and its request removed, its file's size and SHA-256 stay.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { DocumentRequest } from '../../src/contract/documents.ts';
import { DataKeyMissingError, SealedValueInvalidError, SealedValueMisplacedError } from '../../src/sealing/errors.ts';
import { keyIdOf, SEALED_PREFIX } from '../../src/sealing/format.ts';
import { createClearSealer } from '../../src/sealing/sealer.ts';
import { PDF } from '../support/simulator-fixture.ts';
import { apiDocument, documentEngines, emrDocument, type OpenedDocuments, request, sealerWithNewKey, withDocuments } from './documents-engines.ts';

const MARK = 'Qx7SealMark';
const PHONE_DIGITS = '5557319024';
/** A PDF whose bytes carry the marker too. */
const FILE = Buffer.concat([PDF, Buffer.from(`%${MARK}-file-bytes\n`)]);

/** A request whose patient name, phone, label and file each carry a marker. */
const markedRequest = (externalId: string): DocumentRequest => ({
  ...request(externalId),
  patientName: `${MARK} Patient`,
  patientPhone: `+1${PHONE_DIGITS}`,
  label: `${MARK} label`,
  file: { base64: FILE.toString('base64'), filename: 'marked.pdf', mimeType: 'application/pdf' },
});

/** What a scan of a stored value looks for: the marker, the phone, the file's bytes as the request carries them. */
const MARKERS = [MARK, PHONE_DIGITS, FILE.toString('base64')];
const markersIn = (stored: string) => MARKERS.filter((m) => stored.includes(m));

interface StoredColumns {
  request: string | null;
  document_size: number | null;
  document_sha256: string | null;
}

/** The row's request and file columns as the database holds them. */
async function stored(e: OpenedDocuments, externalId: string): Promise<StoredColumns> {
  const [row] = await e.query<StoredColumns>('SELECT request, document_size, document_sha256 FROM outbox_documents WHERE external_id = ?', externalId);
  return row!;
}

/** The error `promise` rejects with. */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('it opened');
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe.each(documentEngines)('the document store on $name: requests sealed at rest', (engine) => {
  it('stores a request sealed for its row, naming none of its patient name, phone, label or file', async () => {
    await withDocuments(engine, async (e) => {
      const sealer = await sealerWithNewKey(e.clock);
      const { row } = await e.replica(sealer).enqueue(apiDocument('lab-1', { request: markedRequest('lab-1') }));
      const { request: raw } = await stored(e, 'lab-1');
      expect(raw!.startsWith(SEALED_PREFIX)).toBe(true);
      expect(keyIdOf(raw!)).toBe(sealer.currentKid);
      expect(markersIn(raw!)).toEqual([]);
      expect(row.request).toBe(raw);
    });
  });

  it('reads a sealed request back whole, from its row as from the memory of the store that enqueued it', async () => {
    await withDocuments(engine, async (e) => {
      const sealer = await sealerWithNewKey(e.clock);
      await e.replica(sealer).enqueue(apiDocument('lab-1', { request: markedRequest('lab-1') }));
      expect(await e.replica(sealer).requestOf('lab-1')).toEqual(markedRequest('lab-1'));
      const enqueuing = e.replica(sealer);
      await enqueuing.enqueue(apiDocument('lab-2', { request: markedRequest('lab-2') }));
      expect(await enqueuing.requestOf('lab-2')).toEqual(markedRequest('lab-2'));
    });
  });

  it('stores a request in clear with the clear sealer (DATA_ENCRYPTION=off): the same scan finds every marker', async () => {
    await withDocuments(engine, async (e) => {
      await e.replica(createClearSealer()).enqueue(apiDocument('lab-1', { request: markedRequest('lab-1') }));
      const { request: raw } = await stored(e, 'lab-1');
      expect(markersIn(raw!)).toEqual(MARKERS);
      expect(JSON.parse(raw!)).toEqual(markedRequest('lab-1'));
    });
  });

  it('opens a request stored in clear before sealing was turned on', async () => {
    await withDocuments(engine, async (e) => {
      await e.documents.enqueue(apiDocument('lab-1'));
      expect(await e.replica(await sealerWithNewKey(e.clock)).requestOf('lab-1')).toEqual(request('lab-1'));
    });
  });

  it("seals the requests the EMR scan files: a new document's, and a REJECTED one's queued again", async () => {
    await withDocuments(engine, async (e) => {
      const sealer = await sealerWithNewKey(e.clock);
      const scanning = e.replica(sealer);
      await scanning.fileScanned([
        { kind: 'new', document: emrDocument('dr-1', { request: markedRequest('dr-1') }) },
        { kind: 'new', document: emrDocument('dr-2', { request: undefined, rejected: { code: 'unsupported_file_type', reason: 'GIF' } }) },
      ]);
      expect(await scanning.fileScanned([{ kind: 'requeue', externalId: 'dr-2', request: markedRequest('dr-2'), version: '2' }])).toEqual([true]);
      for (const id of ['dr-1', 'dr-2']) {
        const { request: raw } = await stored(e, id);
        expect(raw!.startsWith(SEALED_PREFIX)).toBe(true);
        expect(markersIn(raw!)).toEqual([]);
        expect(await e.replica(sealer).requestOf(id)).toEqual(markedRequest(id));
      }
    });
  });

  it('refuses a request sealed for another row (copied there): SealedValueMisplacedError naming both rows', async () => {
    await withDocuments(engine, async (e) => {
      const sealer = await sealerWithNewKey(e.clock);
      const enqueuing = e.replica(sealer);
      for (const id of ['lab-1', 'lab-2']) await enqueuing.enqueue(apiDocument(id));
      await e.query('UPDATE outbox_documents SET request = ? WHERE external_id = ?', (await stored(e, 'lab-1')).request, 'lab-2');
      const err = await rejection(e.replica(sealer).requestOf('lab-2'));
      expect(err).toBeInstanceOf(SealedValueMisplacedError);
      expect(err.message).toMatch(/outbox_documents\/request\/lab-2 was sealed for outbox_documents\/request\/lab-1/);
      expect(await e.replica(sealer).requestOf('lab-1')).toEqual(request('lab-1'));
    });
  });

  it('names the key a request is sealed under when the store was not given it: DataKeyMissingError', async () => {
    await withDocuments(engine, async (e) => {
      const sealer = await sealerWithNewKey(e.clock);
      await e.replica(sealer).enqueue(apiDocument('lab-1'));
      for (const without of [await sealerWithNewKey(e.clock), createClearSealer()]) {
        const err = await rejection(e.replica(without).requestOf('lab-1'));
        expect(err).toBeInstanceOf(DataKeyMissingError);
        expect(err).toMatchObject({ code: 'data_key_missing', kid: sealer.currentKid });
      }
    });
  });

  it('refuses a truncated sealed request: SealedValueInvalidError', async () => {
    await withDocuments(engine, async (e) => {
      const sealer = await sealerWithNewKey(e.clock);
      await e.replica(sealer).enqueue(apiDocument('lab-1'));
      const raw = (await stored(e, 'lab-1')).request!;
      await e.query('UPDATE outbox_documents SET request = ? WHERE external_id = ?', raw.slice(0, raw.length - 10), 'lab-1');
      const err = await rejection(e.replica(sealer).requestOf('lab-1'));
      expect(err).toBeInstanceOf(SealedValueInvalidError);
      expect(err).toMatchObject({ code: 'sealed_value_invalid' });
    });
  });
});

describe.each(documentEngines)("the document store on $name: the file's size and SHA-256", (engine) => {
  it('keeps them once the document is SENT and its request is removed', async () => {
    await withDocuments(engine, async (e) => {
      const sealer = await sealerWithNewKey(e.clock);
      const { row } = await e.replica(sealer).enqueue(apiDocument('lab-1', { request: markedRequest('lab-1') }));
      const kept = { document_size: FILE.length, document_sha256: sha256(FILE) };
      expect(row).toMatchObject(kept);
      await e.documents.recordOutcome('lab-1', { state: 'SENT' });
      expect(await stored(e, 'lab-1')).toEqual({ request: null, ...kept });
      expect(await e.documents.get('lab-1')).toMatchObject({ state: 'SENT', request: null, ...kept });
      expect((await e.documents.page({ limit: 5 })).rows).toMatchObject([{ external_id: 'lab-1', ...kept }]);
    });
  });

  it("keeps those of a REJECTED document's new version, queued again by the EMR scan", async () => {
    await withDocuments(engine, async (e) => {
      await e.documents.fileScanned([
        { kind: 'new', document: emrDocument('dr-1', { request: undefined, rejected: { code: 'unsupported_file_type', reason: 'GIF' } }) },
      ]);
      expect(await stored(e, 'dr-1')).toEqual({ request: null, document_size: null, document_sha256: null });
      await e.documents.fileScanned([{ kind: 'requeue', externalId: 'dr-1', request: markedRequest('dr-1'), version: '2' }]);
      expect(await stored(e, 'dr-1')).toMatchObject({ document_size: FILE.length, document_sha256: sha256(FILE) });
    });
  });

  it('keeps none for a file given by URL, whose bytes never pass through the adapter', async () => {
    await withDocuments(engine, async (e) => {
      const byUrl = { ...request('lab-1'), file: { url: 'https://lab.example/r.pdf', filename: 'r.pdf' } };
      await e.documents.enqueue(apiDocument('lab-1', { request: byUrl }));
      expect(await stored(e, 'lab-1')).toMatchObject({ document_size: null, document_sha256: null });
    });
  });
});
