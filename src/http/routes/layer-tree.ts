import { type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { type FastifyPluginAsync } from 'fastify';

import { BadRequest } from '../../errors.js';
import { type LayerTreeRequest as LayerTreeRequestBody } from '../../qgis/layer-tree.js';
import { type LayerTreeService, MAX_TREE_DEPTH } from '../../services/layer-tree.js';
import { type RouteModule } from '../route-module.js';
import { errorResponses, ProjectParams, SchemaQuery } from '../schemas.js';

const groupFields = {
  title: Type.Optional(
    Type.String({ maxLength: 4096, description: 'The WMS title (QGIS Server: the name when empty)' }),
  ),
  short_name: Type.Optional(
    Type.String({ maxLength: 255, description: 'The name QGIS Server publishes the group under (else its name)' }),
  ),
  abstract: Type.Optional(Type.String({ maxLength: 65536 })),
  embedded: Type.Optional(
    Type.Boolean({ description: 'A group embedded from another project; its children are that project’s' }),
  ),
};

const TreeNode = Type.Recursive(
  (Node) =>
    Type.Union([
      Type.Object({ type: Type.Literal('layer'), name: Type.String(), visible: Type.Boolean() }),
      Type.Object({
        type: Type.Literal('group'),
        name: Type.String(),
        visible: Type.Boolean(),
        expanded: Type.Boolean(),
        mutually_exclusive: Type.Boolean(),
        ...groupFields,
        children: Type.Array(Node),
      }),
    ]),
  { $id: 'LayerTreeNode' },
);

const LayerTree = Type.Object({
  children: Type.Array(TreeNode),
  order: Type.Optional(
    Type.Array(Type.String(), { description: 'The drawing order, top first, when the project sets its own' }),
  ),
});

const TreeRequestNode = Type.Recursive(
  (Node) =>
    Type.Union([
      Type.Object(
        { type: Type.Literal('layer'), name: Type.String({ minLength: 1 }), visible: Type.Optional(Type.Boolean()) },
        { additionalProperties: false },
      ),
      Type.Object(
        {
          type: Type.Literal('group'),
          name: Type.String({ minLength: 1, maxLength: 4096 }),
          visible: Type.Optional(Type.Boolean()),
          expanded: Type.Optional(Type.Boolean()),
          mutually_exclusive: Type.Optional(
            Type.Boolean({ description: 'Shows one child at a time: the first visible one, the others are hidden' }),
          ),
          ...groupFields,
          children: Type.Optional(Type.Array(Node)),
        },
        { additionalProperties: false },
      ),
    ]),
  { $id: 'LayerTreeRequestNode' },
);

const LayerTreeRequest = Type.Object(
  {
    children: Type.Array(TreeRequestNode),
    order: Type.Optional(
      Type.Union([Type.Array(Type.String()), Type.Null()], {
        description: 'The drawing order, top first, naming every layer once; absent or null: the tree’s order',
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * How deep arrays and objects nest along `children` in `body`, counted without recursion: the
 * schema recurses there alone (anything deep elsewhere fails its type first), and a large tree's
 * layers are passed over without looking into them.
 */
function nesting(body: unknown): number {
  if (typeof body !== 'object' || body === null) return 0;
  let deepest = 0;
  const arrays: unknown[][] = [];
  const depths: number[] = [];
  const follow = (children: unknown, depth: number): void => {
    if (typeof children !== 'object' || children === null) return;
    deepest = Math.max(deepest, depth);
    if (Array.isArray(children)) {
      arrays.push(children);
      depths.push(depth);
    }
  };
  follow((body as { children?: unknown }).children, 1);
  for (let array = arrays.pop(); array; array = arrays.pop()) {
    const depth = (depths.pop() as number) + 1;
    for (const item of array) {
      if (typeof item !== 'object' || item === null) continue;
      deepest = Math.max(deepest, depth);
      if (!Array.isArray(item) && Object.hasOwn(item, 'children'))
        follow((item as { children: unknown }).children, depth + 1);
    }
  }
  return deepest;
}

/** Each group adds three levels of JSON (its object, its children, the array), beside the body's own two. */
const MAX_BODY_NESTING = 3 * MAX_TREE_DEPTH + 3;

export function layerTreeRoutes(trees: LayerTreeService): RouteModule {
  const routes: FastifyPluginAsync = async (app) => {
    const api = app.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['layers'];
    api.get(
      '',
      {
        schema: {
          tags,
          summary: 'The layer tree: groups and layers, top first, and the drawing order when the project sets one',
          params: ProjectParams,
          querystring: SchemaQuery,
          response: { 200: LayerTree, ...errorResponses },
        },
      },
      async (request) => trees.tree(request.project),
    );
    api.put(
      '',
      {
        schema: {
          tags,
          summary: 'Replace the layer tree (every layer exactly once) and the drawing order',
          params: ProjectParams,
          querystring: SchemaQuery,
          body: LayerTreeRequest,
          response: { 200: LayerTree, ...errorResponses },
        },
        // The schema is checked recursively: a body nested deeper than any tree is refused before.
        preValidation: async (request) => {
          if (nesting(request.body) > MAX_BODY_NESTING)
            throw new BadRequest(`groups nest at most ${MAX_TREE_DEPTH} deep`);
        },
      },
      // The type provider does not follow the recursive schema's nodes; the schema has checked them.
      async (request) => trees.replace(request.project, request.body as LayerTreeRequestBody),
    );
  };
  return { prefix: '/api/projects/:project/tree', routes };
}
