import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { UnsupportedMediaType } from '../../errors.js';
import { type MapService } from '../../services/maps.js';
import { type SldStyles } from '../../services/sld-styles.js';
import { type StyleDocuments } from '../../services/style-documents.js';
import { type StylePackages, type UploadOptions } from '../../services/style-packages.js';
import { type StyleService } from '../../services/styles.js';
import { type ProjectRef } from '../../storage/project-store.js';
import { type Reseeder } from '../../tile-cache/reseed.js';
import { owsAccessParams } from '../ows-access.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, LayerParams, ProjectParams, SchemaQuery, ViewAsQuery } from '../schemas.js';
import { asAttachment } from '../security-headers.js';
import { UploadBudget } from '../upload-budget.js';
import { ReseedQuery, withReseed } from './reseed.js';

const StyleParams = Type.Object({ project: Type.String(), style: Type.String() });
const LayerStyleParams = Type.Object({ project: Type.String(), layer: Type.String(), style: Type.String() });

const DefaultStyle = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1 })),
    style: Type.Optional(Type.String({ minLength: 1 })),
    geometry: Type.String({ minLength: 1, description: 'point, line or polygon' }),
  },
  { additionalProperties: false },
);

const LayerStyle = Type.Object(
  { name: Type.String({ minLength: 1 }), current: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

const Defaults = Type.Object({ point: Type.String(), line: Type.String(), polygon: Type.String() });

const StyleAnswer = Type.Object({
  created: Type.Boolean(),
  warnings: Type.Array(Type.String(), { description: 'fonts no QGIS Server instance has' }),
});

const PackageAnswer = Type.Object({
  created: Type.Boolean(),
  images: Type.Array(Type.String(), {
    description: "the package's images the style draws with, kept with the project",
  }),
  warnings: Type.Array(Type.String(), {
    description: 'fonts no QGIS Server instance has, entries of the package not used',
  }),
});

const StyleQmlQuery = Type.Object({
  ...SchemaQuery.properties,
  layer: Type.Optional(Type.String({ minLength: 1, description: 'the layer whose values the QML holds' })),
});

const StyleShapeQuery = Type.Object({
  ...SchemaQuery.properties,
  as: Type.Optional(Type.Literal('json', { description: 'the style as a JSON body, or 422 saying why it cannot be' })),
});

const CurrentFlag = Type.Optional(
  Type.Union([Type.Literal('true'), Type.Literal('false')], { description: "Make it the layer's current style" }),
);

const StylePutQuery = Type.Object({
  ...SchemaQuery.properties,
  layer: Type.Optional(Type.String({ minLength: 1, description: 'a layer to put the style in the style manager of' })),
  current: CurrentFlag,
});

const UploadQuery = Type.Object({
  ...ReseedQuery.properties,
  layer: Type.Optional(
    Type.String({ minLength: 1, description: 'a layer to put the style in the style manager of, in the same write' }),
  ),
  current: CurrentFlag,
  force: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], {
      description: 'Store the style even when a layer getting it lacks fields it reads',
    }),
  ),
});

/** What an upload's query asks of the store: the layer given the style, and whether fields are checked. */
function uploadOptions(query: Static<typeof UploadQuery>): UploadOptions {
  const { layer, current, force } = query;
  const target = layer === undefined ? undefined : { layer, current: current === 'true' };
  return { target, checkFields: force !== 'true' };
}

/** The layers an upload changes the drawing of, to seed again: none for a new style not made current. */
function redrawn(styles: StyleService, ref: ProjectRef, name: string, current: string | undefined) {
  return async ({ created }: { created: boolean }): Promise<string[]> =>
    created && current !== 'true' ? [] : styles.layersDrawing(ref, name);
}

const SldQuery = Type.Object({
  ...ReseedQuery.properties,
  current: CurrentFlag,
});

const XML_TYPES = ['application/xml', 'text/xml'];
const SLD_TYPES = ['application/vnd.ogc.sld+xml', ...XML_TYPES];
const ZIP_TYPES = ['application/zip', 'application/x-zip-compressed'];

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** The body of a request that must be a `what` document of one of `types`; 415 for any other content type. */
function xmlBody(contentType: string | undefined, body: unknown, what = 'a QML style', types = XML_TYPES): string {
  const type = mediaType(contentType);
  if (!types.includes(type) || typeof body !== 'string') {
    throw new UnsupportedMediaType(`${what} is sent as ${types.join(' or ')}, not "${type || 'no type'}"`);
  }
  return body;
}

/** The body of a request that must be a zip archive; 415 for any other content type. */
function zipBody(contentType: string | undefined, body: unknown): Buffer {
  const type = mediaType(contentType);
  if (!ZIP_TYPES.includes(type) || !Buffer.isBuffer(body)) {
    throw new UnsupportedMediaType(`a style package is sent as ${ZIP_TYPES.join(' or ')}, not "${type || 'no type'}"`);
  }
  return body;
}

/**
 * The style upload routes, in a context of their own: only they parse XML bodies, and only they
 * take bodies up to `bodyLimit`.
 */
function uploadRoutes(services: StyleRouteServices): FastifyPluginAsync {
  const { styles, stylePackages: packages, sldStyles, styleBodyLimit: bodyLimit, reseeder } = services;
  const budget = new UploadBudget(services.uploadBudget);
  return async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    // Before the body is read: its declared length, or the most it may be when it declares none.
    app.addHook('onRequest', async (request, reply) =>
      budget.holdDeclared(reply, request.headers['content-length'], bodyLimit),
    );
    app.addContentTypeParser(SLD_TYPES, { parseAs: 'string', bodyLimit }, (_request, body, done) => done(null, body));
    app.addContentTypeParser(ZIP_TYPES, { parseAs: 'buffer', bodyLimit }, (_request, body, done) => done(null, body));
    // Any other type reaches the route, which names the types it takes.
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, _body, done) => done(null, undefined));
    api.put(
      '/styles/:style/qml',
      {
        bodyLimit,
        schema: {
          tags: ['styles'],
          summary: 'Add or replace a style from a QML document as QGIS writes it',
          description:
            'The body is the QML (application/xml or text/xml). 201 when the style is new, 200 when it replaced ' +
            "one (in every layer that has it). With `layer`, the style is also put in that layer's style " +
            'manager, as its current style with `current=true`, in the same write (one version of the project), ' +
            'after the same checks, that layer included; 404 (`layer_not_found`) for a layer the project lacks. ' +
            '400 for a document that is not a QGIS style, 422 naming the images it names that are neither with ' +
            'the project nor on the server, when a layer getting the style cannot draw with it, or ' +
            '(`fields_missing`) naming the fields it reads (renderer, rules, labels, data-defined properties) ' +
            'that a vector layer getting it lacks, unless `force=true`; nothing is stored when refused. Fonts ' +
            'no QGIS Server instance has are warnings.',
          params: StyleParams,
          querystring: UploadQuery,
          body: Type.Unknown({ description: 'the QML document' }),
          response: { 200: StyleAnswer, 201: StyleAnswer, ...errorResponses },
        },
      },
      async (request, reply) => {
        const qml = xmlBody(request.headers['content-type'], request.body);
        const { project, params, query } = request;
        const answer = await withReseed(
          { reseeder, asked: query.reseed, reply, ref: project },
          () => packages.putDocument(project, params.style, qml, uploadOptions(query)),
          redrawn(styles, project, params.style, query.current),
        );
        return reply.status(answer.created ? 201 : 200).send(answer);
      },
    );
    api.put(
      '/layers/:layer/styles/:style/sld',
      {
        bodyLimit,
        schema: {
          tags: ['styles'],
          summary: "Add or replace a style from SLD, as QGIS's Load Style reads it into the layer",
          description:
            'The body is an SLD 1.0 or SE 1.1 document (application/vnd.ogc.sld+xml, application/xml or text/xml). ' +
            "QGIS Server, through Steward's plugin, loads it into a copy of the layer as QGIS Desktop's Load " +
            'Style does (loadSldStyle) and the QML it then saves is stored as the style, added to the layer, as ' +
            'its current style with `current=true`. 201 when the style is new, 200 when it replaced one (in every ' +
            "layer that has it); 400 for a document that is not SLD; 422 with QGIS's reason when QGIS reads no " +
            'style from it (QGIS reads SLD for vector layers only), or naming the images it names that are ' +
            'neither with the project nor on the server; 502 when QGIS Server lacks the plugin. Fonts no QGIS ' +
            'Server instance has are warnings.',
          params: LayerStyleParams,
          querystring: SldQuery,
          body: Type.Unknown({ description: 'the SLD document' }),
          response: { 200: StyleAnswer, 201: StyleAnswer, ...errorResponses },
        },
      },
      async (request, reply) => {
        const sld = xmlBody(request.headers['content-type'], request.body, 'an SLD style', SLD_TYPES);
        const { project, params, query } = request;
        const answer = await withReseed(
          { reseeder, asked: query.reseed, reply, ref: project },
          () => sldStyles.put(project, params.layer, params.style, sld, query.current === 'true'),
          redrawn(styles, project, params.style, query.current),
        );
        return reply.status(answer.created ? 201 : 200).send(answer);
      },
    );
    api.put(
      '/styles/:style/package',
      {
        bodyLimit,
        schema: {
          tags: ['styles'],
          summary: 'Add or replace a style from a zip of its QML and the SVG and raster images it uses',
          description:
            'The body is a zip (application/zip) holding one .qml and the images it names. The images are kept ' +
            "with the project and the style's paths rewritten to them. 201 when the style is new, 200 when it " +
            "replaced one. With `layer`, the style is also put in that layer's style manager, as its current " +
            'style with `current=true`, in the same write, after the same checks, that layer included; 404 ' +
            '(`layer_not_found`) for a layer the project lacks. 400 for an archive that is unsafe, too large ' +
            'unpacked or holds no single .qml, or a document that is not a QGIS style; 422 naming the images ' +
            'that are neither in the package nor on the server, when a layer getting the style cannot draw with ' +
            'it, or (`fields_missing`) naming the fields it reads that a vector layer getting it lacks, unless ' +
            '`force=true`; nothing is stored when refused. Fonts no QGIS Server instance has are warnings.',
          params: StyleParams,
          querystring: UploadQuery,
          body: Type.Unknown({ description: 'the zip archive' }),
          response: { 200: PackageAnswer, 201: PackageAnswer, ...errorResponses },
        },
      },
      async (request, reply) => {
        const zip = zipBody(request.headers['content-type'], request.body);
        // Reading the style costs its QML's size, held before anything is unpacked.
        budget.hold(reply, packages.documentBytes(zip) - zip.length);
        const { project, params, query } = request;
        const answer = await withReseed(
          { reseeder, asked: query.reseed, reply, ref: project },
          () => packages.put(project, params.style, zip, uploadOptions(query)),
          redrawn(styles, project, params.style, query.current),
        );
        return reply.status(answer.created ? 201 : 200).send(answer);
      },
    );
  };
}

/** What the style routes use of the API's services. */
export interface StyleRouteServices {
  styles: StyleService;
  styleDocuments: StyleDocuments;
  /** The MAP value of a project, for the rules its legends are drawn under. */
  maps: MapService;
  stylePackages: StylePackages;
  sldStyles: SldStyles;
  /** Bytes a style upload may have (the other routes keep the app's limit). */
  styleBodyLimit: number;
  /** Bytes of style uploads worked on at once. */
  uploadBudget: number;
  reseeder: Reseeder | undefined;
}

export function styleRoutes(services: StyleRouteServices): RouteModule {
  const { styles, styleDocuments: documents, reseeder } = services;
  const routes: FastifyPluginAsync = async (app) => {
    await app.register(uploadRoutes(services));
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['styles'];
    const created = { 201: Type.Boolean(), ...errorResponses };
    api.get(
      '/styles',
      {
        schema: {
          tags,
          summary: 'Style names of the project',
          params: ProjectParams,
          querystring: SchemaQuery,
          response: { 200: Type.Array(Type.String()), ...errorResponses },
        },
      },
      async (request) => styles.list(request.project),
    );
    // The style body is checked by the style codec, which names the offending member or property.
    api.post(
      '/styles',
      {
        schema: {
          tags,
          summary: 'Add a style (its name in the body)',
          params: ProjectParams,
          querystring: SchemaQuery,
          body: Type.Unknown({ description: 'a vector or raster style, checked by the style codec' }),
          response: created,
        },
      },
      async (request, reply) => {
        await styles.add(request.project, request.body);
        return reply.status(201).send(true);
      },
    );
    api.get(
      '/styles/default',
      {
        schema: {
          tags,
          summary: 'Default style per geometry',
          params: ProjectParams,
          querystring: SchemaQuery,
          response: { 200: Defaults, ...errorResponses },
        },
      },
      async (request) => styles.defaults(request.project),
    );
    api.post(
      '/styles/default',
      {
        schema: {
          tags,
          summary: 'Set the default style of a geometry',
          params: ProjectParams,
          querystring: SchemaQuery,
          body: DefaultStyle,
          response: { 200: Type.Boolean(), ...errorResponses },
        },
      },
      async (request) => {
        await styles.setDefault(request.project, request.body);
        return true;
      },
    );
    api.get(
      '/styles/:style',
      {
        schema: {
          tags,
          summary: 'A style, in the shape that created it: its JSON body, or its QML document (application/xml)',
          description:
            'With `as=json`, the style as a JSON body whichever way it was made (a QML QGIS Desktop wrote of a ' +
            'renderer the JSON styles have: single symbol, categorized, graduated, singleband gray, multiband ' +
            'colour, singleband pseudocolor), for an editor to start from; 422 saying why when the JSON styles ' +
            'cannot hold what it draws (another renderer, symbols of several layers, labels, diagrams).',
          params: StyleParams,
          querystring: StyleShapeQuery,
        },
      },
      async (request, reply) => {
        if (request.query.as === 'json') return styles.describe(request.project, request.params.style);
        const style = await styles.get(request.project, request.params.style);
        if (typeof style !== 'string') return style;
        return asAttachment(reply, `${request.params.style}.qml`).type('application/xml').send(style);
      },
    );
    api.get(
      '/styles/:style/qml',
      {
        schema: {
          tags,
          summary: 'The QML document of a style, whether it was made from JSON or uploaded as QML',
          description:
            "A raster style made from JSON whose limits are the layer's minimum and maximum (`MinMax`) holds the " +
            'values a layer draws it with, as QGIS Desktop saves them: those of the layer named by `layer`, else ' +
            'of the first layer drawing with the style, else of the first layer having it. 404 for a `layer` the ' +
            'project lacks.',
          params: StyleParams,
          querystring: StyleQmlQuery,
        },
      },
      async (request, reply) => {
        const qml = await styles.getQml(request.project, request.params.style, request.query.layer);
        return asAttachment(reply, `${request.params.style}.qml`).type('application/xml').send(qml);
      },
    );
    api.post(
      '/styles/:style',
      {
        schema: {
          tags,
          summary: 'Add a style named by the path',
          params: StyleParams,
          querystring: SchemaQuery,
          body: Type.Unknown({ description: 'a vector or raster style, checked by the style codec' }),
          response: created,
        },
      },
      async (request, reply) => {
        await styles.add(request.project, request.body, request.params.style);
        return reply.status(201).send(true);
      },
    );
    api.put(
      '/styles/:style',
      {
        schema: {
          tags,
          summary: 'Add or replace a style named by the path, in one request',
          description:
            'The body is a vector or raster style as for POST. 201 when the style is new, 200 when it replaced ' +
            'one, in every layer that has it (those drawing with it are drawn anew); the style is never missing ' +
            'between the two, as it was with DELETE then POST. With `layer`, the style is also put in that ' +
            "layer's style manager, as its current style with `current=true`, in the same write. 422 naming the " +
            'field when a layer getting the style lacks the field a categorized or graduated style classes by.',
          params: StyleParams,
          querystring: StylePutQuery,
          body: Type.Unknown({ description: 'a vector or raster style, checked by the style codec' }),
          response: { 200: Type.Boolean(), 201: Type.Boolean(), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { layer, current } = request.query;
        const target = layer === undefined ? undefined : { layer, current: current === 'true' };
        const created = await styles.put(request.project, request.params.style, request.body, target);
        return reply.status(created ? 201 : 200).send(true);
      },
    );
    api.delete(
      '/styles/:style',
      {
        schema: {
          tags,
          summary: 'Remove a style (refused while a layer draws with it)',
          params: StyleParams,
          querystring: SchemaQuery,
          response: { 200: Type.Boolean(), ...errorResponses },
        },
      },
      async (request) => {
        await styles.remove(request.project, request.params.style);
        return true;
      },
    );
    api.post(
      '/layers/:layer/style',
      {
        schema: {
          tags,
          summary: "Add a style to a layer's style manager, optionally as its current style",
          params: LayerParams,
          querystring: ReseedQuery,
          body: LayerStyle,
          response: { 200: Type.Boolean(), ...errorResponses },
        },
      },
      async (request, reply) => {
        const { project, params, body } = request;
        await withReseed(
          { reseeder, asked: request.query.reseed, reply, ref: project },
          () => styles.applyToLayer(project, params.layer, body),
          async () => (await styles.layersDrawing(project, body.name)).filter((layer) => layer === params.layer),
        );
        return true;
      },
    );
    api.get(
      '/layers/:layer/style.sld',
      {
        schema: {
          tags,
          summary: "The layer's current style as SLD, as QGIS Desktop's Save as SLD writes it",
          description:
            "A vector layer: SLD 1.1 (`se:`) of its current style alone, from QGIS Server's WMS GetStyles. " +
            'A raster layer: the SLD 1.0 `<UserLayer>` Desktop writes for it (`sld:RasterSymbolizer`).',
          params: LayerParams,
          querystring: SchemaQuery,
        },
      },
      async (request, reply) => {
        const sld = await documents.sld(request.project, request.params.layer);
        return asAttachment(reply, `${request.params.layer}.sld`).type('application/vnd.ogc.sld+xml').send(sld);
      },
    );
    api.get(
      '/layers/:layer/legend',
      {
        schema: {
          tags,
          summary: "The layer's legend as QGIS Server draws it (WMS GetLegendGraphic, PNG)",
          params: LayerParams,
          querystring: ViewAsQuery,
        },
      },
      async (request, reply) => {
        const { project, params } = request;
        const access = await owsAccessParams(request.identity, project, (ref) => services.maps.mapParameter(ref));
        const legend = await documents.legend(project, params.layer, access);
        return reply.type(legend.contentType).send(legend.body);
      },
    );
  };
  return { prefix: '/api/projects/:project', routes };
}
