import { Type } from '@sinclair/typebox';

import { ERROR_CODES, type ErrorCode } from '../errors.js';

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'What failed and what to change, as a sentence' }),
    code: Type.Unsafe<ErrorCode>({
      type: 'string',
      enum: [...ERROR_CODES],
      description: 'What failed, as a stable identifier to switch on (docs/errors.md)',
    }),
  },
  { $id: 'Error' },
);

export const SchemaQuery = Type.Object({
  schema: Type.Optional(
    Type.String({ minLength: 1, maxLength: 255, description: 'Database schema of the project (default public)' }),
  ),
});

/** `view_as`: an administrator's roles to draw and list as (src/http/view-as.ts). */
export const ViewAsProperty = {
  view_as: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1000,
      description:
        'Administrators only: role names, comma-separated, whose rules QGIS Server and the API apply instead of yours',
    }),
  ),
};

/** The query of a project's reads that an administrator may make as other roles. */
export const ViewAsQuery = Type.Object({ ...SchemaQuery.properties, ...ViewAsProperty });

/** A read cursor in a query: the `next` of an earlier answer. */
export const CursorText = (description: string) => Type.String({ pattern: '^(0|[1-9][0-9]{0,15})$', description });

/** What an identity may do with a project (docs/access.md): administrators and open access `admin`. */
export const AccessLevel = Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('admin')], {
  description: 'What the identity asking may do with the project',
});

export const ProjectParams = Type.Object({ project: Type.String() });
export const LayerParams = Type.Object({ project: Type.String(), layer: Type.String() });

/** Error replies every route may give. */
export const errorResponses = {
  '4xx': ErrorBody,
  '5xx': ErrorBody,
};
