// The crosswalk's bulk import on the "Needs mapping" page over a real crosswalk: a CSV uploaded as a file or
// pasted, each good line mapped (audited `crosswalk.map` from the console, source `import`) and each refused line
// shown with its line number and reason; a file refused whole (no header, too large) or a form without a CSV shown
// as a page saying why; only an operator with the session's token imports.
import { describe, expect, it } from 'vitest';
import { CSV_MAX_BYTES } from '../../src/crosswalk/csv.ts';
import { csrfOf, signedIn, VIEWER_TOKEN } from './support/console-app.ts';
import { crosswalkConsole } from './support/crosswalk-console.ts';

const PAGE = '/console/needs-mapping';

function csv(ids: { doctor: string; location: string }): string {
  return [
    'entityType,serviceId,emrId',
    `doctor,doc_1,${ids.doctor}`,
    'nurse,n_1,x',
    `location,loc_1,${ids.location}`,
    'doctor,doc_2,practitioner-emr-999',
    'doctor,,practitioner-emr-1',
  ].join('\r\n');
}

/** The refused lines' table as [line, reason] pairs. */
const refusedRows = (text: string): [number, string][] =>
  [...text.matchAll(/<tr><td class="num">(\d+)<\/td><td class="reason">([^<]*)<\/td><\/tr>/g)].map((m) => [Number(m[1]), m[2]!]);

describe('the crosswalk import on the Needs mapping page', () => {
  it('imports an uploaded file line by line, showing how many were imported and each refused line with its reason', async () => {
    const { c, crosswalk, ids, waitingAppointments } = crosswalkConsole();
    await waitingAppointments(['apt_1']);
    const agent = await signedIn(c);
    const page = (await agent.get(PAGE).expect(200)).text;
    expect(page).toContain('enctype="multipart/form-data"');

    const res = await agent
      .post(`${PAGE}/import`)
      .field('csrf', csrfOf(page))
      .attach('file', Buffer.from(csv(ids)), { filename: 'crosswalk.csv', contentType: 'text/csv' })
      .expect(200);
    expect(res.text).toContain('<strong id="imported-count">2</strong> lines imported, <strong id="refused-count">3</strong> refused.');
    expect(refusedRows(res.text)).toEqual([
      [3, expect.stringMatching(/^unknown entity type &quot;nurse&quot;/)],
      [5, expect.stringMatching(/the EMR has no .*practitioner-emr-999/)],
      [6, 'serviceId is empty'],
    ]);
    expect(await crosswalk.get({ entityType: 'doctor', serviceId: 'doc_1' })).toMatchObject({ emrId: ids.doctor, source: 'import' });
    expect(await crosswalk.get({ entityType: 'location', serviceId: 'loc_1' })).toMatchObject({ emrId: ids.location, source: 'import' });
    expect(await crosswalk.get({ entityType: 'doctor', serviceId: 'doc_2' })).toBeUndefined();
    const entries = c.auditor.entries.filter((e) => e.actor === 'admin' && e.action.startsWith('crosswalk.'));
    expect(entries.map((e) => `${e.action} ${e.door} ${e.targets.join(',')} ${e.outcome}`)).toEqual([
      'crosswalk.map console doctor:doc_1 ok',
      'crosswalk.map console location:loc_1 ok',
      'crosswalk.map console doctor:doc_2 refused',
      'crosswalk.import console  ok',
    ]);
    expect((await agent.get(PAGE).expect(200)).text).toContain('Nothing needs mapping.');
  });

  it('imports lines pasted into the form', async () => {
    const { c, crosswalk, ids } = crosswalkConsole();
    const agent = await signedIn(c);
    const page = (await agent.get(PAGE).expect(200)).text;
    const res = await agent
      .post(`${PAGE}/import`)
      .field('csrf', csrfOf(page))
      .field('csv', `entityType,serviceId,emrId\ndoctor,doc_9,${ids.doctor}\n`)
      .expect(200);
    expect(res.text).toContain('<strong id="imported-count">1</strong> line imported');
    expect(res.text).toContain('No line was refused.');
    expect(await crosswalk.get({ entityType: 'doctor', serviceId: 'doc_9' })).toMatchObject({ emrId: ids.doctor });
  });

  it('refuses a file without the header, a form with no CSV or with both, and a file over the limit, importing nothing', async () => {
    const { c, crosswalk, ids } = crosswalkConsole();
    const agent = await signedIn(c);
    const csrf = csrfOf((await agent.get(PAGE).expect(200)).text);
    const post = () => agent.post(`${PAGE}/import`).field('csrf', csrf);

    const noHeader = await post().field('csv', `doctor,doc_1,${ids.doctor}`).expect(422);
    expect(noHeader.text).toContain('Nothing imported: the first line must be the header entityType,serviceId,emrId.');
    expect((await post().field('csv', '  ').expect(422)).text).toContain('Nothing imported: Choose a CSV file or paste its lines.');
    const both = await post()
      .field('csv', `entityType,serviceId,emrId\ndoctor,doc_1,${ids.doctor}`)
      .attach('file', Buffer.from(`entityType,serviceId,emrId\ndoctor,doc_1,${ids.doctor}`), 'crosswalk.csv')
      .expect(422);
    expect(both.text).toContain('not both');
    const huge = Buffer.from(`entityType,serviceId,emrId\n${'doctor,doc_1,x\n'.repeat(Math.ceil((CSV_MAX_BYTES + 70 * 1024) / 15))}`);
    expect((await post().attach('file', huge, 'huge.csv')).status).toBe(413);
    expect(await crosswalk.get({ entityType: 'doctor', serviceId: 'doc_1' })).toBeUndefined();
    expect(c.auditor.entries.filter((e) => e.action === 'crosswalk.import').map((e) => e.outcome)).toEqual(['refused', 'refused', 'refused']);
  });

  it('refuses a viewer and a form without the session token', async () => {
    const { c, crosswalk, ids } = crosswalkConsole();
    const line = `entityType,serviceId,emrId\ndoctor,doc_1,${ids.doctor}`;
    const viewer = await signedIn(c, VIEWER_TOKEN);
    const csrf = csrfOf((await viewer.get(PAGE).expect(200)).text);
    await viewer.post(`${PAGE}/import`).field('csrf', csrf).field('csv', line).expect(403);
    expect(c.auditor.entries.at(-1)).toMatchObject({ actor: 'day-viewer', action: 'crosswalk.import', outcome: 'denied' });
    const operator = await signedIn(c);
    await operator.post(`${PAGE}/import`).field('csv', line).expect(403);
    expect(c.auditor.entries.at(-1)).toMatchObject({ actor: 'admin', action: 'crosswalk.import', outcome: 'refused' });
    expect(await crosswalk.get({ entityType: 'doctor', serviceId: 'doc_1' })).toBeUndefined();
  });
});
