/**
 * The failures Steward answers with, each with its HTTP status and a stable code (docs/errors.md).
 * Services and engines throw these; `src/http/errors.ts` turns any of them into
 * `{"error": clientMessage, "code": code}`.
 *
 * `message` is what the log gets, with the detail an engine (GDAL, PostgreSQL, QGIS Server,
 * MapProxy) gave; `clientMessage` is what the client gets. They differ only where the engine's
 * text is of no use to the client (a 5xx): a 4xx tells the client what to change, so its
 * message is the client's.
 */

/** The code of a failure whose thrower named none: one per status. */
const STATUS_CODES = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  408: 'request_timeout',
  409: 'conflict',
  412: 'precondition_failed',
  413: 'too_large',
  414: 'uri_too_long',
  415: 'unsupported_media_type',
  422: 'unprocessable',
  429: 'rate_limited',
  499: 'client_closed_request',
  500: 'internal',
  502: 'bad_gateway',
  503: 'unavailable',
  504: 'gateway_timeout',
  507: 'disk_full',
} as const;

/** The codes a thrower names where a client would act on the failure itself, not only its status. */
const SPECIFIC_CODES = [
  'invalid_body',
  'invalid_query',
  'invalid_params',
  'invalid_headers',
  'invalid_json',
  'token_missing',
  'token_invalid',
  'outside_data_roots',
  'route_not_found',
  'feature_disabled',
  'project_not_found',
  'layer_not_found',
  'style_not_found',
  'field_not_found',
  'fields_missing',
  'version_not_found',
  'job_not_found',
  'instance_not_found',
  'token_not_found',
  'role_not_found',
  'name_taken',
  'style_in_use',
  'output_exists',
  'output_is_datasource',
  'job_ended',
  'broken_layers',
  'file_in_use',
  'project_pinned',
  'datasource_unreadable',
  'project_unreadable',
  'database_unavailable',
  'not_ready',
  'qgis_server_unreachable',
  'qgis_server_timeout',
] as const;

/** Every code an error answer may carry, as docs/errors.md lists them. */
export const ERROR_CODES = [...new Set(Object.values(STATUS_CODES)), ...SPECIFIC_CODES] as const;

export type ErrorCode = (typeof STATUS_CODES)[keyof typeof STATUS_CODES] | (typeof SPECIFIC_CODES)[number];

/** The code of a failure of `status` that names none. */
export function statusCode(status: number): ErrorCode {
  return STATUS_CODES[status as keyof typeof STATUS_CODES] ?? (status < 500 ? 'bad_request' : 'internal');
}

export interface StewardErrorOptions {
  /** What the client is told instead of `message`. */
  clientMessage?: string;
  /** What a client may switch on; by default the code of the status. */
  code?: ErrorCode;
  cause?: unknown;
}

export class StewardError extends Error {
  readonly clientMessage: string;
  readonly code: ErrorCode;

  constructor(
    readonly status: number,
    message: string,
    options: StewardErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.clientMessage = options.clientMessage ?? message;
    this.code = options.code ?? statusCode(status);
  }
}

/** The base of the errors of one status: constructed from their message alone. */
function withStatus(status: number) {
  return class extends StewardError {
    constructor(message: string, options?: StewardErrorOptions) {
      super(status, message, options);
    }
  };
}

export class BadRequest extends withStatus(400) {}

/** A request without the API token, or with a wrong one. */
export class Unauthorized extends withStatus(401) {}

export class Forbidden extends withStatus(403) {}

export class NotFound extends withStatus(404) {}

export class Conflict extends withStatus(409) {}

/** A conditional request (`If-Match`) whose condition does not hold: the resource changed. */
export class PreconditionFailed extends withStatus(412) {}

/** An upload larger than the route takes. */
export class PayloadTooLarge extends withStatus(413) {}

/** A request body that stopped arriving, or a request not received whole in time. */
export class RequestTimeout extends withStatus(408) {}

/** A path with a segment longer than the router takes. */
export class UriTooLong extends withStatus(414) {}

export class UnsupportedMediaType extends withStatus(415) {}

export class Unprocessable extends withStatus(422) {}

/**
 * A failure the client may retry after `retryAfterSeconds` (sent as `Retry-After`): too many wrong
 * tokens from its address (429), too many bytes of uploads in flight (503).
 */
export class RetryLater extends StewardError {
  constructor(
    status: 429 | 503,
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(status, message);
  }
}

/** The client closed its connection before its answer was ready: the work for it was stopped. */
export class ClientClosedRequest extends withStatus(499) {}

/** An engine answered with a failure, or could not be reached. */
export class BadGateway extends withStatus(502) {}

/** Something Steward depends on (the project database) is down or refuses it for now. */
export class ServiceUnavailable extends withStatus(503) {}

/** An engine did not answer in time. */
export class GatewayTimeout extends withStatus(504) {}

/** A disk Steward writes to is full, or would be by the work asked for; the message names it. */
export class InsufficientStorage extends withStatus(507) {}

/**
 * A QGIS document that cannot be read: XML that is not well-formed, or a project of a shape QGIS
 * does not write. Code that reads a client's upload turns it into a 400 of its own; one that
 * escapes is a stored project gone bad, which the operator must see in the log.
 */
export class DocumentFormatError extends Unprocessable {
  constructor(message: string) {
    super(message, { clientMessage: `the stored project cannot be read: ${message}`, code: 'project_unreadable' });
  }
}
