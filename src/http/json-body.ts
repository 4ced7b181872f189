import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** RFC 8259 whitespace: space, tab, LF, CR. */
function isBlank(bytes: Buffer): boolean {
  return bytes.every((byte) => byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d);
}

/**
 * JSON bodies must be UTF-8 (RFC 8259): bytes that are not are refused (400 INVALID_JSON) rather than turned into
 * U+FFFD replacement characters and stored. Parsing itself stays Fastify's (prototype-poisoning checks included).
 *
 * A body that says nothing is `{}` (docs/decisions/0005-request-input-rules.md): an empty (or blank) body declared
 * as JSON, and no body at all on a route that takes one. An operation whose fields are all optional
 * (`POST /wallets`, `PATCH /webhooks/{id}`) then runs as with `{}`, and one with required fields answers 400
 * VALIDATION_ERROR naming each of them, rather than INVALID_JSON or "must be object".
 */
export function installStrictJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (isBlank(bytes)) {
      done(null, {});
      return;
    }
    if (!isUtf8(bytes)) {
      done(Object.assign(new Error('The request body is not valid UTF-8.'), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_UTF8' }), undefined);
      return;
    }
    // The default parser is the callback kind: it answers through `done` and returns nothing to wait for.
    void parseJson(request, bytes.toString('utf8'), done);
  });

  const absentBodyAsEmptyObject = async (request: FastifyRequest) => {
    if (request.body === undefined) request.body = {};
  };
  app.addHook('onRoute', (route) => {
    if (route.schema?.body === undefined) return;
    const asArray = <T>(hooks: T | T[] | undefined): T[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]);
    route.preValidation = [absentBodyAsEmptyObject, ...asArray(route.preValidation)];
  });
}
