/** `?reseed=true` on the routes that change what a layer draws: its cached tiles are seeded again. */
import { Type } from '@sinclair/typebox';
import { type FastifyReply } from 'fastify';

import { Conflict } from '../../errors.js';
import { type ProjectRef } from '../../storage/project-store.js';
import { type Reseeder } from '../../tile-cache/reseed.js';
import { SchemaQuery } from '../schemas.js';
import { CACHE_DISABLED } from './cache.js';

export const ReseedQuery = Type.Object({
  ...SchemaQuery.properties,
  reseed: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description:
        'Seed the layers that now draw differently again, on the levels and extent of their last successful ' +
        'seed: a seed job each set of levels, named by `Link: </api/jobs/{id}>; rel="monitor"`',
    }),
  ),
});

/** A route's reseed context: the reseeder (none without a tile cache) and whether the request asks. */
export interface ReseedAsk {
  reseeder: Reseeder | undefined;
  /** The `reseed` query parameter. */
  asked: 'true' | 'false' | undefined;
  reply: FastifyReply;
  ref: ProjectRef;
}

/**
 * Runs a style change and, when asked, seeds again the layers it redrew (`redrawn` names them).
 * Whether the project can be seeded is asked first, so that a refusal leaves the style unchanged.
 */
export async function withReseed<T>(
  ask: ReseedAsk,
  change: () => Promise<T>,
  redrawn: (result: T) => Promise<string[]>,
): Promise<T> {
  if (ask.asked !== 'true') return change();
  if (!ask.reseeder) throw new Conflict(CACHE_DISABLED, { code: 'feature_disabled' });
  await ask.reseeder.assertReady(ask.ref);
  const result = await change();
  const jobs = await ask.reseeder.reseed(ask.ref, await redrawn(result));
  if (jobs.length > 0) ask.reply.header('link', jobs.map((job) => `</api/jobs/${job.id}>; rel="monitor"`).join(', '));
  return result;
}
