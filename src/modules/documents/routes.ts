import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { documentBodyLimitBytes } from '../../config/limits.js';
import { callerOf } from '../../http/auth.js';
import { idempotencyHeaders, onCreatedOf } from '../../http/idempotency.js';
import { DataOf, authenticatedReadErrors, errorResponses, uploadErrors } from '../../http/schemas.js';
import type { DocumentService } from './service.js';
import { Document, DocumentParams, DocumentUploadResult, EndUserDocumentsParams, UploadDocumentBody } from './schemas.js';

export function documentRoutes(app: FastifyInstance, documents: DocumentService): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Documents'];

  routes.post(
    '/documents',
    {
      // Room for the base64 of the largest file (docs/documents.md); anything bigger answers 413 unread.
      bodyLimit: documentBodyLimitBytes,
      config: { scope: 'documents:write', idempotency: { kind: 'create', readScope: 'documents:read' } },
      schema: {
        tags,
        operationId: 'uploadDocument',
        summary: 'Upload a verification document',
        description:
          'Stores the file, then synchronises it with the provider in the background (docs/documents.md). ' +
          'Accepts an Idempotency-Key (docs/idempotency.md): a retry with the same key replays the first answer and creates nothing.',
        headers: idempotencyHeaders(false),
        body: UploadDocumentBody,
        response: { 201: DataOf(DocumentUploadResult), ...errorResponses(...uploadErrors, 404, 409, 422) },
      },
    },
    async (request) => {
      await documents.upload(callerOf(request), request.body, onCreatedOf(request));
    },
  );

  routes.get(
    '/documents/:id',
    {
      config: { scope: 'documents:read' },
      schema: {
        tags,
        operationId: 'getDocument',
        summary: 'Get a document and its provider sync status',
        params: DocumentParams,
        response: { 200: DataOf(Document), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => ({ data: await documents.get(callerOf(request), request.params.id) }),
  );

  routes.get(
    '/end-users/:endUserId/documents',
    {
      config: { scope: 'documents:read' },
      schema: {
        tags,
        operationId: 'listEndUserDocuments',
        summary: 'List the documents of an end user',
        params: EndUserDocumentsParams,
        response: { 200: DataOf(Type.Array(Document)), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => ({ data: await documents.listOfEndUser(callerOf(request), request.params.endUserId) }),
  );
}
