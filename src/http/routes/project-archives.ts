/** GET and PUT /api/projects/{project}/archive: projects in and out as QGIS Desktop has them (docs/publishing.md). */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type ProjectArchives } from '../../services/project-archives.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, ProjectParams, SchemaQuery } from '../schemas.js';
import { asAttachment } from '../security-headers.js';
import { admitUpload, handOverBody, takeStreamedBodies, threadedBody } from '../streamed-uploads.js';
import { UploadBudget } from '../upload-budget.js';
import { ProjectCheck } from './checks.js';

const Flag = (description: string) =>
  Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description }));

const DownloadQuery = Type.Object({
  ...SchemaQuery.properties,
  data: Flag('A zip of the project and the data files of its layers, paths made relative, rather than the .qgz'),
});

const PublishQuery = Type.Object({
  ...SchemaQuery.properties,
  replace: Flag('Replace the project when it exists (else 409, unless If-Match names its version)'),
  allow_broken: Flag('Store the project even when layers are broken (else 422 naming them)'),
});

const PublishAnswer = Type.Object({
  created: Type.Boolean(),
  etag: Type.String({ description: "The stored project's version, for If-Match" }),
  data_dir: Type.Optional(Type.String({ description: "Where the bundle's data files now are" })),
  data_files: Type.Array(Type.String(), { description: "The bundle's data files, by their path in the bundle" }),
  check: ProjectCheck,
});

export interface ArchiveRouteServices {
  archives: ProjectArchives;
  /** Bytes a project upload may have. */
  publishBodyLimit: number;
  /** Bytes of uploads worked on at once. */
  uploadBudget: number;
}

export function projectArchiveRoutes(services: ArchiveRouteServices): RouteModule {
  const { archives, publishBodyLimit: bodyLimit } = services;
  const budget = new UploadBudget(Math.max(services.uploadBudget, bodyLimit));
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    takeStreamedBodies(app);
    api.get(
      '/:project/archive',
      {
        schema: {
          tags: ['projects'],
          summary: 'The project as a .qgz QGIS Desktop opens, or with ?data=true a zip of it and its data files',
          params: ProjectParams,
          querystring: DownloadQuery,
          response: { 200: Type.Unknown({ description: 'application/zip' }), ...errorResponses },
        },
      },
      async (request, reply) => {
        const download = await archives.download(request.project, request.query.data === 'true');
        return asAttachment(reply, download.filename)
          .header('etag', download.etag)
          .header('content-length', download.length)
          .type('application/zip')
          .send(download.body);
      },
    );
    api.put(
      '/:project/archive',
      {
        onRequest: [admitUpload(budget, bodyLimit), handOverBody],
        schema: {
          tags: ['projects'],
          summary: 'Publish a project from QGIS Desktop: a .qgs, a .qgz, or a zip bundle of the project and its data',
          description:
            "A bundle's data files go to the project's folder of STEWARD_UPLOAD_ROOT and the layers' datasources are " +
            'pointed at them. The project is checked as GET .../check checks it: 422 naming the broken layers unless ' +
            '?allow_broken=true. An existing project is replaced only with ?replace=true (else 409) or an If-Match ' +
            'naming its ETag (else 412), atomically. 201 when the project is new, 200 when it replaced one.',
          params: ProjectParams,
          querystring: PublishQuery,
          body: Type.Unknown({ description: 'the .qgs, .qgz or zip bundle' }),
          response: { 200: PublishAnswer, 201: PublishAnswer, ...errorResponses },
        },
      },
      async (request, reply) => {
        const ifMatch = request.headers['if-match'];
        const answer = await archives.publish(request.project, threadedBody(request), {
          replace: request.query.replace === 'true',
          ifMatch,
          allowBroken: request.query.allow_broken === 'true',
        });
        return reply
          .status(answer.created ? 201 : 200)
          .header('etag', answer.etag)
          .send(answer);
      },
    );
  };
  return { prefix: '/api/projects', routes };
}
