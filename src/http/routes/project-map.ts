import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { BadRequest } from '../../errors.js';
import { type MapService, type MapView } from '../../services/maps.js';
import { owsAccessParams } from '../ows-access.js';
import { type RouteModule } from '../route-module.js';
import { ProjectParams } from '../schemas.js';

const MAX_SIZE = 4096;

const ViewQuery = Type.Object({
  schema: Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: 'Database schema of the project (default public)' }),
  ),
  layers: Type.String({ minLength: 1, description: 'Layer names, comma-separated, bottom first' }),
  styles: Type.Optional(
    Type.String({ description: "A style per layer, comma-separated; an empty one is the layer's current style" }),
  ),
  bbox: Type.String({ description: 'minx,miny,maxx,maxy in `crs`, east first whatever the CRS' }),
  crs: Type.String({ pattern: '^EPSG:[0-9]{1,6}$', default: 'EPSG:3857' }),
  width: Type.String({ pattern: '^[0-9]{1,4}$', description: `Pixels, 1 to ${MAX_SIZE}` }),
  height: Type.String({ pattern: '^[0-9]{1,4}$', description: `Pixels, 1 to ${MAX_SIZE}` }),
});

function sizeOf(name: string, text: string): number {
  const size = Number(text);
  if (size < 1 || size > MAX_SIZE)
    throw new BadRequest(`${name} must be between 1 and ${MAX_SIZE} pixels, not ${text}`);
  return size;
}

function bboxOf(text: string): MapView['bbox'] {
  const numbers = text.split(',').map(Number);
  const [minx, miny, maxx, maxy] = numbers;
  if (
    numbers.length !== 4 ||
    minx === undefined ||
    miny === undefined ||
    maxx === undefined ||
    maxy === undefined ||
    !numbers.every(Number.isFinite) ||
    minx >= maxx ||
    miny >= maxy
  ) {
    throw new BadRequest(`bbox must be four numbers minx,miny,maxx,maxy with min < max, not "${text}"`);
  }
  return [minx, miny, maxx, maxy];
}

/**
 * A project's map as an interactive client draws it: one GetMap of several layers for the view the
 * client shows, drawn by QGIS Server. The web console's map uses it as an OpenLayers image source.
 */
export function projectMapRoutes(maps: MapService): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    api.get(
      '/wms',
      {
        schema: {
          tags: ['layers'],
          summary: 'PNG of a view of several layers of the project (a WMS GetMap drawn by QGIS Server)',
          params: ProjectParams,
          querystring: ViewQuery,
        },
      },
      async (request, reply) => {
        const { query } = request;
        const layers = query.layers.split(',');
        const styles = query.styles === undefined || query.styles === '' ? [] : query.styles.split(',');
        if (styles.length > 0 && styles.length !== layers.length) {
          throw new BadRequest(`styles names ${styles.length} styles for ${layers.length} layers`);
        }
        const view = {
          layers,
          styles,
          bbox: bboxOf(query.bbox),
          crs: query.crs,
          width: sizeOf('width', query.width),
          height: sizeOf('height', query.height),
        };
        const params = await owsAccessParams(request.identity, request.project, (ref) => maps.mapParameter(ref));
        const map = await maps.view(request.project, view, params);
        return reply.headers({ ...map.headers, 'cache-control': 'no-store' }).send(map.body);
      },
    );
  };
  return { prefix: '/api/projects/:project', routes };
}
