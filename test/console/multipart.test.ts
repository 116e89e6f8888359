// Reading a multipart form (src/console/multipart.ts): the parts a browser sends, a file's bytes as they were
// (line breaks and a delimiter-like line inside kept), a quoted boundary, a body cut short or without a name.
import { describe, expect, it } from 'vitest';
import { boundaryOf, partsOf } from '../../src/console/multipart.ts';

const B = '----formboundary7MA4YWxk';

const body = (...parts: string[]) => Buffer.from(`${parts.map((p) => `--${B}\r\n${p}\r\n`).join('')}--${B}--\r\n`);

describe('a multipart form', () => {
  it('reads text fields and a file by name, keeping the file’s lines and bytes', () => {
    const file = 'entityType,serviceId,emrId\r\ndoctor,doc_1,"pr,1"\r\n--not-the-boundary\r\nlocation,loc_é,l-1';
    const form = partsOf(
      body(
        'Content-Disposition: form-data; name="csrf"\r\n\r\ntoken-1',
        `Content-Disposition: form-data; name="file"; filename="crosswalk.csv"\r\nContent-Type: text/csv\r\n\r\n${file}`,
        'Content-Disposition: form-data; name="csv"\r\n\r\n',
      ),
      B,
    );
    expect([...form.entries()]).toEqual([
      ['csrf', 'token-1'],
      ['file', file],
      ['csv', ''],
    ]);
  });

  it('leaves out a part without a name, and one the body cuts short', () => {
    const whole = body('Content-Disposition: form-data\r\n\r\nnameless', 'Content-Disposition: form-data; name="csrf"\r\n\r\nt');
    expect([...partsOf(whole, B).entries()]).toEqual([['csrf', 't']]);
    const cut = Buffer.from(
      `--${B}\r\nContent-Disposition: form-data; name="csrf"\r\n\r\nt\r\n--${B}\r\nContent-Disposition: form-data; name="file"\r\n\r\nhalf a fi`,
    );
    expect([...partsOf(cut, B).entries()]).toEqual([['csrf', 't']]);
    expect([...partsOf(Buffer.from('no delimiter at all'), B).entries()]).toEqual([]);
  });

  it('finds the boundary, quoted or not', () => {
    expect(boundaryOf(`multipart/form-data; boundary=${B}`)).toBe(B);
    expect(boundaryOf('multipart/form-data; boundary="a b:c"; charset=utf-8')).toBe('a b:c');
    expect(boundaryOf('multipart/form-data')).toBeUndefined();
  });
});
