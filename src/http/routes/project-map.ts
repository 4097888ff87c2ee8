import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { BadRequest } from '../../errors.js';
import { type FeatureQueries } from '../../services/feature-queries.js';
import { type MapService, type MapView } from '../../services/maps.js';
import { type StylePreviews } from '../../services/style-previews.js';
import { owsAccessParams } from '../ows-access.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, LayerParams, ProjectParams, ViewAsProperty } from '../schemas.js';

const MAX_SIZE = 4096;

const ViewQuery = Type.Object({
  schema: Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: 'Database schema of the project (default public)' }),
  ),
  layers: Type.String({ minLength: 1, description: 'Layer names, comma-separated, bottom first' }),
  styles: Type.Optional(
    Type.String({
      description:
        "A style per layer, comma-separated; an empty one is the layer's current style, one the layer does not have a 404",
    }),
  ),
  bbox: Type.String({ description: 'minx,miny,maxx,maxy in `crs`, east first whatever the CRS' }),
  crs: Type.String({ pattern: '^EPSG:[0-9]{1,6}$', default: 'EPSG:3857' }),
  width: Type.String({ pattern: '^[0-9]{1,4}$', description: `Pixels, 1 to ${MAX_SIZE}` }),
  height: Type.String({ pattern: '^[0-9]{1,4}$', description: `Pixels, 1 to ${MAX_SIZE}` }),
  ...ViewAsProperty,
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

/** A view to preview a style in: drawn under the identity's own rules (its write of the project lets it edit styles). */
const PreviewQuery = Type.Omit(ViewQuery, ['view_as']);

/** The view a map client asks for, checked: its layers, styles, extent and size. */
function viewOf(query: Static<typeof PreviewQuery>): MapView {
  const layers = query.layers.split(',');
  const styles = query.styles === undefined || query.styles === '' ? [] : query.styles.split(',');
  if (styles.length > 0 && styles.length !== layers.length) {
    throw new BadRequest(`styles names ${styles.length} styles for ${layers.length} layers`);
  }
  return {
    layers,
    styles,
    bbox: bboxOf(query.bbox),
    crs: query.crs,
    width: sizeOf('width', query.width),
    height: sizeOf('height', query.height),
  };
}

/** A pixel of the view: 0 to its size less one. */
function pixelOf(name: string, text: string, size: number): number {
  const pixel = Number(text);
  if (pixel >= size) throw new BadRequest(`${name} must be a pixel of the view, 0 to ${size - 1}, not ${text}`);
  return pixel;
}

const FeatureInfoQuery = Type.Object({
  ...ViewQuery.properties,
  i: Type.String({ pattern: '^[0-9]{1,4}$', description: 'Column of the pixel asked about, from the left' }),
  j: Type.String({ pattern: '^[0-9]{1,4}$', description: 'Row of the pixel asked about, from the top' }),
});

const FoundFeature = Type.Object({
  layer: Type.String({ description: 'The layer of the project the feature is of' }),
  id: Type.String(),
  properties: Type.Record(Type.String(), Type.Unknown(), { description: 'Its attributes as QGIS Server gives them' }),
});

/**
 * A project's map as an interactive client draws it: one GetMap of several layers for the view the
 * client shows, drawn by QGIS Server, and the features under a pixel of it; the same view with one
 * layer drawn in a style being edited, not stored. The web console's map uses them as an
 * OpenLayers image source, for its feature info and for the style editor's live preview.
 */
export function projectMapRoutes(maps: MapService, features: FeatureQueries, previews: StylePreviews): RouteModule {
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
        const params = await owsAccessParams(request.identity, request.project, (ref) => maps.mapParameter(ref));
        const map = await maps.view(request.project, viewOf(request.query), params);
        return reply.headers({ ...map.headers, 'cache-control': 'no-store' }).send(map.body);
      },
    );
    api.post(
      '/layers/:layer/style-preview',
      {
        schema: {
          tags: ['styles'],
          summary: 'PNG of a view with one layer drawn in a JSON style that is not stored (a style being edited)',
          description:
            'The view is given as for `/wms` and must hold the layer; the body is a vector or raster style as for ' +
            "`PUT .../styles/{style}`, drawn by QGIS Server (through Steward's plugin) on a copy of the layer, " +
            "under the identity's rules as a map is: nothing is written, the project and its styles stay as they " +
            'are, and the audit log does not record it. Needs `write` of the project. 422 when the layer cannot ' +
            'draw the style (another kind, a field or band it lacks), 502 when QGIS Server lacks the plugin.',
          params: LayerParams,
          querystring: PreviewQuery,
          body: Type.Unknown({ description: 'a vector or raster style, checked by the style codec' }),
        },
      },
      async (request, reply) => {
        const params = await owsAccessParams(request.identity, request.project, (ref) => maps.mapParameter(ref));
        const view = viewOf(request.query);
        const map = await previews.draw(request.project, request.params.layer, request.body, view, params);
        return reply.headers({ ...map.headers, 'cache-control': 'no-store' }).send(map.body);
      },
    );
    api.get(
      '/feature-info',
      {
        schema: {
          tags: ['layers'],
          summary: 'The features of a view under one of its pixels (a WMS GetFeatureInfo answered by QGIS Server)',
          description:
            'The view is given as for `/wms`; its identifiable layers are queried, the others named in ' +
            '`not_identifiable` (none identifiable: no feature, and QGIS Server is not asked). At most 20 features, ' +
            'those of points and lines within 8 pixels.',
          params: ProjectParams,
          querystring: FeatureInfoQuery,
          response: {
            200: Type.Object({
              features: Type.Array(FoundFeature),
              not_identifiable: Type.Array(Type.String(), {
                description: "The layers of the view the project's flags keep from being identified, not queried",
              }),
            }),
            ...errorResponses,
          },
        },
      },
      async (request) => {
        const { query } = request;
        const view = viewOf(query);
        const params = await owsAccessParams(request.identity, request.project, (ref) => maps.mapParameter(ref));
        const i = pixelOf('i', query.i, view.width);
        const j = pixelOf('j', query.j, view.height);
        const found = await features.at(request.project, view, i, j, params);
        return { features: found.features, not_identifiable: found.notIdentifiable };
      },
    );
  };
  return { prefix: '/api/projects/:project', routes };
}
