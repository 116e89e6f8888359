// What the console shows of a document's file once its bytes are gone (a final status): the size and SHA-256
// the outbox kept, read from the store by the data port and shown on the document's page; a dash when unknown.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createConsoleData } from '../../src/console/data-source.ts';
import { fhirRecordRefs } from '../../src/emr/fhir/refs.ts';
import { silentLogger } from '../../src/logger.ts';
import { createDependencyStatus } from '../../src/status/dependency-status.ts';
import { createSqliteDocumentStore } from '../../src/storage/sqlite/documents.ts';
import { apiDocument } from '../storage/documents-engines.ts';
import { PDF } from '../support/simulator-fixture.ts';
import { processorFixture } from '../support/processor-fixture.ts';
import { consoleApp, signedIn } from './support/console-app.ts';

const SHA = createHash('sha256').update(PDF).digest('hex');

describe("a document's file in the console", () => {
  it("gives the file's size and SHA-256 of a document SENT, its bytes removed", async () => {
    const f = processorFixture();
    const documents = createSqliteDocumentStore(f.db, f.clock);
    const data = createConsoleData({
      processor: f.stores,
      documents,
      status: createDependencyStatus({ clock: f.clock, logger: silentLogger() }),
      database: { isWritable: () => true, writeFailure: () => undefined },
      metrics: f.metrics,
      clock: f.clock,
      refs: fhirRecordRefs,
    });
    await documents.enqueue(apiDocument('lab-1'));
    await documents.recordOutcome('lab-1', { state: 'SENT' });
    expect(await data.document('lab-1')).toMatchObject({ status: 'SENT', file: { size: PDF.length, sha256: SHA } });
  });

  it("shows them on the document's page, and a dash where they are unknown", async () => {
    const c = consoleApp();
    c.data.documents_.get('doc_sent_1')!.file = { size: 1234, sha256: SHA };
    const agent = await signedIn(c);
    expect((await agent.get('/console/documents/doc_sent_1').expect(200)).text).toContain(`id="document-file">1234 bytes, SHA-256 <code>${SHA}</code>`);
    expect((await agent.get('/console/documents/doc_failed_1').expect(200)).text).toContain('id="document-file">—');
  });
});
