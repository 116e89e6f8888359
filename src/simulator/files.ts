// The file of a document request, resolved to bytes the simulator keeps: base64 decoded, or an https URL
// fetched once (timeout, size cap, trusting an extra CA for tests). PDF, JPEG and PNG only, judged by
// leading bytes; at most 15 MB; mimeType from the filename when absent. Errors carry the codes of
// docs/decisions.md#error-bodies.
import { createHash } from 'node:crypto';
import { request } from 'undici';
import { ERROR_CODES } from '../contract/api.ts';
import { AppError } from '../errors.ts';
import { createHttpAgent } from '../http/agent.ts';
import { base64DecodedLength, MAX_FILE_BYTES, mimeTypeFromFilename, sniffMimeType, type FileObject } from '../contract/documents.ts';

export interface StoredFile {
  name: string;
  mimeType: string;
  size: number;
  sha256: string;
  base64: string;
}

const fileError = (status: number, code: string, message: string) => new AppError({ code, status, message, field: 'file' });

export function createFileFetcher(trustedCa?: string | Buffer, timeoutMs = 10_000) {
  const agent = createHttpAgent({ timeoutMs, ...(trustedCa ? { trustedCa } : {}) });

  async function fetchOnce(url: string): Promise<Buffer> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw fileError(422, ERROR_CODES.fileUrlRejected, 'file.url is not a URL');
    }
    if (parsed.protocol !== 'https:') throw fileError(422, ERROR_CODES.fileUrlRejected, 'file.url must be https');
    try {
      const res = await request(parsed, { dispatcher: agent, maxRedirections: 0 } as Parameters<typeof request>[1]);
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw fileError(422, ERROR_CODES.fileUrlUnreachable, `file.url answered ${res.statusCode}`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > MAX_FILE_BYTES) {
          res.body.destroy();
          throw fileError(413, ERROR_CODES.fileTooLarge, 'the file is larger than 15 MB');
        }
        chunks.push(chunk as Buffer);
      }
      return Buffer.concat(chunks);
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw fileError(422, ERROR_CODES.fileUrlUnreachable, 'file.url could not be fetched');
    }
  }

  return {
    async resolve(file: FileObject): Promise<StoredFile> {
      let bytes: Buffer;
      if (file.base64 !== undefined) {
        if (base64DecodedLength(file.base64) > MAX_FILE_BYTES) throw fileError(413, ERROR_CODES.fileTooLarge, 'the file is larger than 15 MB');
        bytes = Buffer.from(file.base64, 'base64');
      } else bytes = await fetchOnce(file.url!);
      if (bytes.length > MAX_FILE_BYTES) throw fileError(413, ERROR_CODES.fileTooLarge, 'the file is larger than 15 MB');
      const sniffed = sniffMimeType(bytes);
      if (!sniffed) throw fileError(415, ERROR_CODES.unsupportedFileType, 'only PDF, JPEG and PNG files are accepted');
      return {
        name: file.filename,
        mimeType: file.mimeType ?? mimeTypeFromFilename(file.filename) ?? sniffed,
        size: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        base64: bytes.toString('base64'),
      };
    },
    close: () => agent.close(),
  };
}
