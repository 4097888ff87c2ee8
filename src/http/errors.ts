import { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

import { StewardError } from '../errors.js';
import { ProjectFormatError } from '../qgis/project.js';
import { XmlSyntaxError } from '../qgis/xml/parse.js';

/** The longest path parameter the router takes; a longer one is answered 414. */
export const MAX_PATH_SEGMENT_LENGTH = 1000;

/**
 * Fastify's `frameworkErrors`: the router's own refusals (a path that is not valid percent-encoded
 * UTF-8, a parameter over maxParamLength) never reach the error handler, so they are shaped here.
 */
export function frameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  void reply.status(error.statusCode ?? 400).send({ error: error.message });
}

/** Maps every failure to `{"error": "..."}` with the status of DESIGN.md section 4. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof StewardError) {
      return reply.status(error.status).send({ error: error.message });
    }
    if (error.validation) {
      const where = error.validationContext ?? 'request';
      return reply.status(400).send({ error: `invalid ${where}: ${error.message}` });
    }
    if (error instanceof XmlSyntaxError || error instanceof ProjectFormatError) {
      request.log.error({ err: error }, 'a stored project cannot be read');
      return reply.status(422).send({ error: `the stored project cannot be read: ${error.message}` });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.status(status).send({ error: error.message });
    }
    request.log.error({ err: error }, 'unexpected failure');
    return reply.status(500).send({ error: 'internal error; the server log has the details' });
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    // The console's catch-all route takes what the router refused for an over-long parameter.
    if (path.split('/').some((segment) => segment.length > MAX_PATH_SEGMENT_LENGTH)) {
      return reply.status(414).send({ error: `a path segment is longer than ${MAX_PATH_SEGMENT_LENGTH} characters` });
    }
    return reply.status(404).send({ error: `no route ${request.method} ${path}` });
  });
}
