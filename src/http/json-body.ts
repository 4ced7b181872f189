import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';

/**
 * JSON bodies must be UTF-8 (RFC 8259): bytes that are not are refused (400 INVALID_JSON) rather than turned into
 * U+FFFD replacement characters and stored. Parsing itself stays Fastify's (prototype-poisoning checks included).
 */
export function installStrictJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (!isUtf8(bytes)) {
      done(Object.assign(new Error('The request body is not valid UTF-8.'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_UTF8' }), undefined);
      return;
    }
    parseJson(request, bytes.toString('utf8'), done);
  });
}
