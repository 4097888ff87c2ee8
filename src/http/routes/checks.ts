/** GET /api/projects/{project}/check and GET /api/checks: what QGIS Server will make of projects. */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { type ProjectChecker, unlistedCheck } from '../../insight/checks.js';
import { projectRef, type ProjectService } from '../../services/projects.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, ProjectParams, SchemaQuery } from '../schemas.js';

const Finding = Type.Object({
  kind: Type.Union([
    Type.Literal('datasource'),
    Type.Literal('server'),
    Type.Literal('svg'),
    Type.Literal('image'),
    Type.Literal('font'),
    Type.Literal('crs'),
    Type.Literal('layout'),
  ]),
  message: Type.String(),
});

export const ProjectCheck = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('broken')], {
    description:
      'broken: QGIS Server refuses the project, or Steward serves the file under no name (a `layout` finding); ' +
      'degraded: some layers have findings',
  }),
  layers: Type.Array(
    Type.Object({
      name: Type.String(),
      status: Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('broken')]),
      findings: Type.Array(Finding),
    }),
  ),
  findings: Type.Array(Finding, { description: 'About the project as a whole' }),
});

export function checkRoutes(checker: ProjectChecker, projects: ProjectService): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    api.get(
      '/projects/:project/check',
      {
        schema: {
          tags: ['projects'],
          summary: 'Check a project: datasources, files and fonts of its styles, CRSs, what QGIS Server serves',
          params: ProjectParams,
          querystring: SchemaQuery,
          response: { 200: ProjectCheck, ...errorResponses },
        },
      },
      async (request) => checker.check(request.project),
    );
    api.get(
      '/checks',
      {
        schema: {
          tags: ['projects'],
          summary: 'Check every project of a schema',
          description:
            'Keyed by project name; project files outside the `<name>/<name>.qgs` (or `.qgz`) layout, which ' +
            'Steward serves under no name, are keyed by their path in the projects folder, broken, with a ' +
            '`layout` finding that says why and how to serve them.',
          querystring: SchemaQuery,
          response: { 200: Type.Record(Type.String(), ProjectCheck), ...errorResponses },
        },
      },
      async (request) => {
        const schema = request.query.schema;
        const names = await projects.list(schema);
        const checks = [];
        // One project at a time: each check already asks QGIS Server and GDAL in parallel.
        for (const name of names) checks.push([name, await checker.check(projectRef(name, schema))] as const);
        for (const unlisted of await projects.unlisted(schema))
          checks.push([unlisted.file, unlistedCheck(unlisted)] as const);
        return Object.fromEntries(checks);
      },
    );
  };
  return { prefix: '/api', routes };
}
