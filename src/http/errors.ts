import {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';

import {
  DocumentFormatError,
  type ErrorCode,
  type InsufficientStorage,
  NotFound,
  RetryLater,
  statusCode,
  StewardError,
  UriTooLong,
} from '../errors.js';
import { failedPath, fullDiskError, isDiskFull } from '../storage/disk-space.js';

/** The longest path parameter the router takes; a longer one is answered 414. */
export const MAX_PATH_SEGMENT_LENGTH = 1000;

export interface ErrorReply {
  status: number;
  body: { error: string; code: ErrorCode };
  /** `Retry-After`, in seconds, for a failure the client may retry later. */
  retryAfter?: number;
}

function logged(error: StewardError): boolean {
  return error.status >= 500 || error instanceof DocumentFormatError;
}

/** A full disk that no code nearer to it named (storage/disk-space.ts): the path of the failed call, if any. */
function fullDisk(error: unknown): InsufficientStorage {
  const path = failedPath(error);
  return fullDiskError(error, path === undefined ? 'a disk Steward writes to' : `the disk of ${path}`);
}

/** The code of each part of a request Fastify's schema validation refuses. */
const VALIDATION_CODES: Record<string, ErrorCode> = {
  body: 'invalid_body',
  querystring: 'invalid_query',
  params: 'invalid_params',
  headers: 'invalid_headers',
};

/** Fastify's refusals of a body sent as JSON: an empty one, or one that is not JSON. */
const JSON_REFUSALS = new Set(['FST_ERR_CTP_EMPTY_JSON_BODY', 'FST_ERR_CTP_INVALID_JSON_BODY']);

/** Fastify's own 4xx refusals (validation 400, JSON 400, 413, 415) with their code; undefined for anything else. */
function frameworkReply(error: Partial<FastifyError>): ErrorReply | undefined {
  if (error.validation) {
    const context = error.validationContext ?? 'request';
    return {
      status: 400,
      body: { error: `invalid ${context}: ${error.message}`, code: VALIDATION_CODES[context] ?? 'bad_request' },
    };
  }
  const status = error.statusCode ?? 500;
  if (status < 400 || status >= 500) return undefined;
  const code = JSON_REFUSALS.has(error.code ?? '') ? 'invalid_json' : statusCode(status);
  return { status, body: { error: error.message ?? 'bad request', code } };
}

/**
 * The one mapping from a failure to its reply (docs/errors.md): the errors of `src/errors.ts` with
 * their status, client message and code, Fastify's own refusals with theirs, anything else 500.
 * What the client cannot act on goes to the log with its detail.
 */
export function errorReply(failure: unknown, log: FastifyBaseLogger): ErrorReply {
  const error = isDiskFull(failure) ? fullDisk(failure) : failure;
  if (error instanceof StewardError) {
    if (logged(error)) log.error({ err: error }, error.message);
    const body = { error: error.clientMessage, code: error.code };
    if (error instanceof RetryLater) return { status: error.status, body, retryAfter: error.retryAfterSeconds };
    return { status: error.status, body };
  }
  const refused = frameworkReply(error as Partial<FastifyError>);
  if (refused) return refused;
  log.error({ err: error }, 'unexpected failure');
  return { status: 500, body: { error: 'internal error; the server log has the details', code: 'internal' } };
}

export function sendError(reply: FastifyReply, error: unknown): FastifyReply {
  const { status, body, retryAfter } = errorReply(error, reply.log);
  if (retryAfter !== undefined) void reply.header('retry-after', String(retryAfter));
  return reply.status(status).send(body);
}

/**
 * Fastify's `frameworkErrors`: the router's own refusals (a path that is not valid percent-encoded
 * UTF-8, a parameter over maxParamLength) never reach the error handler, so they are shaped here.
 */
export function frameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  void sendError(reply, error);
}

/** Every failure of a route, and every path no route takes, answered by `errorReply`. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, _request, reply) => sendError(reply, error));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    // The console's catch-all route takes what the router refused for an over-long parameter.
    if (path.split('/').some((segment) => segment.length > MAX_PATH_SEGMENT_LENGTH)) {
      return sendError(reply, new UriTooLong(`a path segment is longer than ${MAX_PATH_SEGMENT_LENGTH} characters`));
    }
    return sendError(reply, new NotFound(`no route ${request.method} ${path}`, { code: 'route_not_found' }));
  });
}
