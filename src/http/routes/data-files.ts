/** PUT, GET and DELETE /api/data/{path}: data files in the upload root (docs/publishing.md). */
import { createReadStream } from 'node:fs';

import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type DataFiles } from '../../services/data-files.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses } from '../schemas.js';
import { asAttachment } from '../security-headers.js';
import { admitUpload, handOverBody, takeStreamedBodies, threadedBody } from '../streamed-uploads.js';
import { UploadBudget } from '../upload-budget.js';

const PathParams = Type.Object({ '*': Type.String() });

const Entry = Type.Object({
  name: Type.String(),
  type: Type.Union([Type.Literal('file'), Type.Literal('folder')]),
  size: Type.Optional(Type.Integer()),
});

export interface DataRouteServices {
  dataFiles: DataFiles;
  publishBodyLimit: number;
  uploadBudget: number;
}

export function dataFileRoutes(services: DataRouteServices): RouteModule {
  const { dataFiles, publishBodyLimit: bodyLimit } = services;
  const budget = new UploadBudget(Math.max(services.uploadBudget, bodyLimit));
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    takeStreamedBodies(app);
    api.put(
      '/*',
      {
        onRequest: [admitUpload(budget, bodyLimit), handOverBody],
        schema: {
          tags: ['data'],
          summary: 'Upload a data file into STEWARD_UPLOAD_ROOT, kept only when GDAL opens it (else 422)',
          params: PathParams,
          body: Type.Unknown({ description: 'the file' }),
          response: {
            200: Type.Object({ created: Type.Boolean(), path: Type.String() }),
            201: Type.Object({ created: Type.Boolean(), path: Type.String() }),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const answer = await dataFiles.put(request.params['*'], threadedBody(request));
        return reply.status(answer.created ? 201 : 200).send(answer);
      },
    );
    api.get(
      '/*',
      {
        schema: {
          tags: ['data'],
          summary: "A folder's entries in STEWARD_UPLOAD_ROOT, or a file's bytes",
          params: PathParams,
          response: {
            200: Type.Array(Entry, { description: "a folder's entries; a file is sent as its bytes" }),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const read = await dataFiles.read(request.params['*']);
        if (read.kind === 'folder') return read.entries;
        return asAttachment(reply, read.name).type('application/octet-stream').send(createReadStream(read.path));
      },
    );
    api.delete(
      '/*',
      {
        schema: {
          tags: ['data'],
          summary: 'Remove a file (409 naming the projects and layers reading it) or an empty folder',
          params: PathParams,
          response: { 200: Type.Boolean(), ...errorResponses },
        },
      },
      async (request) => {
        await dataFiles.remove(request.params['*']);
        return true;
      },
    );
  };
  return { prefix: '/api/data', routes };
}
