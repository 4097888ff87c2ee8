/** Long work and its progress: seeding, truncation, processing run as jobs. */
import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync, type FastifyReply } from 'fastify';

import { type JobRecord } from '../../jobs/record.js';
import { type JobService } from '../../jobs/service.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses } from '../schemas.js';

const JobState = Type.Union(
  [
    Type.Literal('queued'),
    Type.Literal('running'),
    Type.Literal('succeeded'),
    Type.Literal('failed'),
    Type.Literal('cancelled'),
  ],
  { description: 'queued, then running, then one of succeeded, failed, cancelled' },
);

const Timestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const Job = Type.Object(
  {
    id: Type.String({ description: 'UUID of the job' }),
    kind: Type.String({ description: 'seed, truncate, calculator, overviews or import' }),
    project: Type.String({ description: 'The project; empty for an import into PostGIS' }),
    schema: Type.Optional(Type.String({ description: "The project's database schema, with projects in PostgreSQL" })),
    state: JobState,
    progress: Type.Number({ minimum: 0, maximum: 1 }),
    done: Type.Integer({ minimum: 0, description: 'Units done (tiles, percent of a GDAL step)' }),
    total: Type.Integer({ minimum: 0, description: 'Units in all; 0 while not known' }),
    created: Type.String({ format: 'date-time' }),
    started: Timestamp,
    finished: Timestamp,
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why the job failed' }),
    params: Type.Record(Type.String(), Type.Unknown(), { description: 'What the job was asked to do' }),
    result: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'What the job produced' })),
  },
  { $id: 'Job' },
);

const JobParams = Type.Object({ id: Type.String() });

const JobQuery = Type.Object({
  project: Type.Optional(Type.String({ minLength: 1 })),
  schema: Type.Optional(Type.String({ minLength: 1 })),
  kind: Type.Optional(Type.String({ minLength: 1 })),
  state: Type.Optional(JobState),
});

/** A job as the API shows it: without its owner and heartbeat, which only the job queue reads. */
export function publicJob(job: JobRecord): Omit<JobRecord, 'owner' | 'heartbeat'> {
  const { owner: _owner, heartbeat: _heartbeat, ...shown } = job;
  return shown;
}

/** The answer to a request whose work became a job: 202, the job, and where to follow it. */
export function acceptedJob(reply: FastifyReply, job: JobRecord): FastifyReply {
  return reply.code(202).header('location', `/api/jobs/${job.id}`).send(publicJob(job));
}

export function jobRoutes(jobs: JobService): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['jobs'];
    api.get(
      '',
      {
        schema: {
          tags,
          summary: 'Jobs, newest first, optionally of one project, kind or state',
          querystring: JobQuery,
          response: { 200: Type.Array(Job), ...errorResponses },
        },
      },
      async (request) => (await jobs.list(request.query)).map(publicJob),
    );
    api.get(
      '/:id',
      {
        schema: {
          tags,
          summary: 'A job and its progress',
          params: JobParams,
          response: { 200: Job, ...errorResponses },
        },
      },
      async (request) => publicJob(await jobs.get(request.params.id)),
    );
    api.delete(
      '/:id',
      {
        schema: {
          tags,
          summary: 'Cancel a queued or running job (409 once it has ended)',
          params: JobParams,
          response: { 200: Job, ...errorResponses },
        },
      },
      async (request) => publicJob(await jobs.cancel(request.params.id)),
    );
  };
  return { prefix: '/api/jobs', routes };
}
