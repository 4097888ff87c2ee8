import { Type } from '@sinclair/typebox';

export const ErrorBody = Type.Object({ error: Type.String() }, { $id: 'Error' });

export const SchemaQuery = Type.Object({
  schema: Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: 'Database schema of the project (default public)' }),
  ),
});

/** A read cursor in a query: the `next` of an earlier answer. */
export const CursorText = (description: string) => Type.String({ pattern: '^(0|[1-9][0-9]{0,15})$', description });

export const ProjectParams = Type.Object({ project: Type.String() });
export const LayerParams = Type.Object({ project: Type.String(), layer: Type.String() });

/** Error replies every route may give. */
export const errorResponses = {
  '4xx': ErrorBody,
  '5xx': ErrorBody,
};
