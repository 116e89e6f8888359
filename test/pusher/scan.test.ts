// The EMR scan's side of the pusher: it runs in one replica at a time (skipped while another holds it), files
// its documents a few megabytes to a commit with the watermark in the last, and files what it read before the
// EMR's content became unavailable, leaving the watermark for the rest.
import { describe, expect, it } from 'vitest';
import { createManualClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import { EmrError } from '../../src/emr/errors.ts';
import { createMemoryEmr, MEMORY_EMR_BASE_URL } from '../../src/emr/memory/index.ts';
import type { EmrDocument } from '../../src/emr/port.ts';
import { silentLogger } from '../../src/logger.ts';
import { createPusher } from '../../src/pusher/index.ts';
import { createScanner, SCAN_FILING_BATCH_CHARS } from '../../src/pusher/scan.ts';
import { createSqliteDocumentStore } from '../../src/storage/sqlite/documents.ts';
import { PDF } from '../support/simulator-fixture.ts';
import { openTestDatabase, sqlitePusherStores } from './sqlite-stores.ts';

const emrDoc = (id: string, base64 = PDF.toString('base64')): EmrDocument => ({
  id,
  version: '1',
  documentType: 'lab_report',
  label: 'CBC',
  filename: 'cbc.pdf',
  content: { base64 },
  patient: { id: 'emr-patient-1', serviceId: 'pat_1' },
  lastUpdated: '2026-01-15T09:00:00.000Z',
});

const noService = {
  async postDocument(): Promise<never> {
    throw new Error('nothing is sent in these tests');
  },
  async getDocument() {
    return undefined;
  },
};

describe('the scan', () => {
  it('runs in one replica at a time: skipped while another holds it, nothing read from the EMR', async () => {
    const db = openTestDatabase();
    const clock = createManualClock();
    const stores = sqlitePusherStores(db, clock);
    const emr = createMemoryEmr();
    emr.documents.push(emrDoc('dr-1'));
    const pusher = createPusher({ ...stores, clock, logger: silentLogger(), emr, config: parseConfig({}), serviceClient: noService });
    let release!: () => void;
    const elsewhere = stores.coordination.exclusive('emr-scan', () => new Promise<void>((r) => (release = r)));
    expect(await pusher.scanOnce()).toBe(0);
    expect(await stores.documents.get('dr-1')).toBeUndefined();
    release();
    await elsewhere;
    expect(await pusher.scanOnce()).toBe(1);
  });

  it('files the first document at once, then a few megabytes to a commit, the watermark with the last', async () => {
    const db = openTestDatabase();
    const clock = createManualClock();
    const emr = createMemoryEmr();
    const outbox = createSqliteDocumentStore(db, clock);
    // Each document a quarter of a batch: the first alone (sending can start), then four to a commit.
    const quarter = Buffer.concat([PDF, Buffer.alloc((SCAN_FILING_BATCH_CHARS / 4) * 0.75 - PDF.length, 0x20)]).toString('base64');
    for (let i = 0; i < 10; i++) emr.documents.push({ ...emrDoc(`dr-${i}`, quarter), lastUpdated: `2026-01-15T09:00:0${i}.000Z` });
    let commits = 0;
    const scanner = createScanner({ logger: silentLogger(), emr, outbox, onFiled: () => commits++ });
    expect(await scanner.scanOnce()).toBe(10);
    expect(commits).toBe(4);
    expect(db.prepare('SELECT watermark FROM pusher_watermark').pluck().get()).toBe('2026-01-15T09:00:09.000Z');
    expect(await outbox.list('queued', 20)).toHaveLength(10);
  });

  it('files what it read before content became unavailable, and leaves the watermark for the rest', async () => {
    const db = openTestDatabase();
    const clock = createManualClock();
    const emr = createMemoryEmr();
    const outbox = createSqliteDocumentStore(db, clock);
    emr.documents.push(emrDoc('dr-1'), { ...emrDoc('dr-2'), content: { url: 'documents/dr-2' } }, emrDoc('dr-3'));
    let down = true;
    const read = emr.readDocumentBytes.bind(emr);
    emr.readDocumentBytes = async (doc) => {
      if (down) throw new EmrError('emr_unavailable', 'down for now');
      return read(doc);
    };
    emr.contents.set(new URL('documents/dr-2', `${MEMORY_EMR_BASE_URL}/`).href, PDF);
    const scanner = createScanner({ logger: silentLogger(), emr, outbox });
    expect(await scanner.scanOnce()).toBe(1);
    expect((await outbox.get('dr-1'))?.state).toBe('queued');
    expect(await outbox.get('dr-3')).toBeUndefined();
    expect(db.prepare('SELECT watermark FROM pusher_watermark').pluck().get()).toBeNull();
    down = false;
    expect(await scanner.scanOnce()).toBe(2);
    expect((await outbox.list('queued', 10)).map((r) => r.external_id).sort()).toEqual(['dr-1', 'dr-2', 'dr-3']);
  });
});
