import {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';

import {
  DocumentFormatError,
  type InsufficientStorage,
  NotFound,
  RetryLater,
  StewardError,
  UriTooLong,
} from '../errors.js';
import { failedPath, fullDiskError, isDiskFull } from '../storage/disk-space.js';

/** The longest path parameter the router takes; a longer one is answered 414. */
export const MAX_PATH_SEGMENT_LENGTH = 1000;

export interface ErrorReply {
  status: number;
  body: { error: string };
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

/**
 * The one mapping from a failure to its reply (docs/errors.md): the errors of `src/errors.ts` with
 * their status and client message, Fastify's own refusals (validation 400, 413, 415) with theirs,
 * anything else 500. What the client cannot act on goes to the log with its detail.
 */
export function errorReply(failure: unknown, log: FastifyBaseLogger): ErrorReply {
  const error = isDiskFull(failure) ? fullDisk(failure) : failure;
  if (error instanceof StewardError) {
    if (logged(error)) log.error({ err: error }, error.message);
    const body = { error: error.clientMessage };
    if (error instanceof RetryLater) return { status: error.status, body, retryAfter: error.retryAfterSeconds };
    return { status: error.status, body };
  }
  const framework = error as Partial<FastifyError>;
  if (framework.validation) {
    return {
      status: 400,
      body: { error: `invalid ${framework.validationContext ?? 'request'}: ${framework.message}` },
    };
  }
  const status = framework.statusCode ?? 500;
  if (status >= 400 && status < 500) return { status, body: { error: framework.message ?? 'bad request' } };
  log.error({ err: error }, 'unexpected failure');
  return { status: 500, body: { error: 'internal error; the server log has the details' } };
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
    return sendError(reply, new NotFound(`no route ${request.method} ${path}`));
  });
}
