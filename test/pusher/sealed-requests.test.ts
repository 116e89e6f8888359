// Sending documents whose requests are sealed at rest (src/storage/documents-requests.ts): a request that does
// not open (sealed for another row, or under a key this process was not given) is that document's failure, as
// any request that cannot be sent: FAILED here at once with the sealing error's code, its reason naming the row
// and the key id, an alert logged with its externalId; the pusher goes on sending the others, and the document
// keeps its request, to be sent again once the key is back.
import { describe, expect, it } from 'vitest';
import { createManualClock, type ManualClock } from '../../src/clock.ts';
import { parseConfig } from '../../src/config.ts';
import type { DocumentResource } from '../../src/contract/documents.ts';
import { createMemoryEmr } from '../../src/emr/memory/index.ts';
import { createPusher } from '../../src/pusher/index.ts';
import { createClearSealer, type Sealer } from '../../src/sealing/sealer.ts';
import type { Db } from '../../src/sqlite/open.ts';
import { createSqliteCoordination } from '../../src/storage/sqlite/coordination.ts';
import { createSqliteDocumentStore } from '../../src/storage/sqlite/documents.ts';
import { createSqliteMappingStore } from '../../src/storage/sqlite/mappings.ts';
import { captureLogger } from '../support/log-capture.ts';
import { apiDocument, sealerWithNewKey } from '../storage/documents-engines.ts';
import { openTestDatabase } from './sqlite-stores.ts';

const sent = (externalId: string): DocumentResource => ({
  type: 'document',
  documentType: 'lab_report',
  serviceId: `doc_${externalId}`,
  externalId,
  status: 'SENT',
  sentAt: '2026-01-15T10:00:00.000Z',
  action: 'received',
});

/** A pusher over `db` whose outbox opens requests with `sealer`, holding none in memory (a restarted process). */
function pusherWith(db: Db, clock: ManualClock, sealer: Sealer) {
  const posts: string[] = [];
  const log = captureLogger();
  const documents = createSqliteDocumentStore(db, clock, sealer);
  const pusher = createPusher({
    documents,
    mappings: createSqliteMappingStore(db, clock),
    coordination: createSqliteCoordination(),
    clock,
    logger: log.logger,
    emr: createMemoryEmr(),
    random: () => 0.5,
    config: parseConfig({}),
    serviceClient: {
      async postDocument(_type, body) {
        posts.push(body.externalId);
        return { httpStatus: 201, replayed: false, resource: sent(body.externalId) };
      },
      async getDocument() {
        return undefined;
      },
    },
  });
  return { pusher, documents, posts, logLines: log.lines };
}

/** A database whose outbox holds `ids` queued, their requests sealed under a key of their own. */
async function sealedOutbox(...ids: string[]) {
  const db = openTestDatabase();
  const clock = createManualClock();
  const sealer = await sealerWithNewKey(clock);
  const enqueuing = createSqliteDocumentStore(db, clock, sealer);
  for (const id of ids) await enqueuing.enqueue(apiDocument(id));
  return { db, clock, sealer };
}

describe('sending documents whose requests are sealed', () => {
  it('sends them, opened from their rows', async () => {
    const { db, clock, sealer } = await sealedOutbox('lab-1');
    const f = pusherWith(db, clock, sealer);
    await f.pusher.runOnce();
    expect(f.posts).toEqual(['lab-1']);
    expect(await f.documents.get('lab-1')).toMatchObject({ state: 'SENT', request: null });
  });

  it('fails here a document whose request was sealed for another row, and sends the others', async () => {
    const { db, clock, sealer } = await sealedOutbox('lab-1', 'lab-2');
    db.prepare("UPDATE outbox_documents SET request = (SELECT request FROM outbox_documents WHERE external_id = 'lab-1') WHERE external_id = 'lab-2'").run();
    const f = pusherWith(db, clock, sealer);
    await f.pusher.runOnce();
    expect(f.posts).toEqual(['lab-1']);
    const failed = (await f.documents.get('lab-2'))!;
    expect(failed).toMatchObject({ state: 'FAILED', error_code: 'sealed_value_misplaced' });
    expect(failed.status_reason).toMatch(/outbox_documents\/request\/lab-2 was sealed for outbox_documents\/request\/lab-1/);
    expect(f.logLines()).toContainEqual(expect.objectContaining({ externalId: 'lab-2', code: 'sealed_value_misplaced', alert: true }));
  });

  it('fails here, naming the key id, a document whose key this process lacks, and sends it once an operator retries with the key back', async () => {
    const { db, clock, sealer } = await sealedOutbox('lab-1');
    const withoutKey = pusherWith(db, clock, createClearSealer());
    await withoutKey.pusher.runOnce();
    expect(withoutKey.posts).toEqual([]);
    const failed = (await withoutKey.documents.get('lab-1'))!;
    expect(failed).toMatchObject({ state: 'FAILED', error_code: 'data_key_missing' });
    expect(failed.status_reason).toContain(`data key ${sealer.currentKid}`);
    expect(failed.request).not.toBeNull();
    expect(withoutKey.logLines()).toContainEqual(expect.objectContaining({ externalId: 'lab-1', code: 'data_key_missing', alert: true }));

    const withKey = pusherWith(db, clock, sealer);
    expect(await withKey.documents.resend('lab-1')).toBe(true);
    await withKey.pusher.runOnce();
    expect(withKey.posts).toEqual(['lab-1']);
    expect(await withKey.documents.get('lab-1')).toMatchObject({ state: 'SENT' });
  });
});
