/**
 * The failures Steward answers with, each with its HTTP status (docs/errors.md). Services and
 * engines throw these; `src/http/errors.ts` turns any of them into `{"error": clientMessage}`.
 *
 * `message` is what the log gets, with the detail an engine (GDAL, PostgreSQL, QGIS Server,
 * MapProxy) gave; `clientMessage` is what the client gets. They differ only where the engine's
 * text is of no use to the client (a 5xx): a 4xx tells the client what to change, so its
 * message is the client's.
 */
export interface StewardErrorOptions {
  /** What the client is told instead of `message`. */
  clientMessage?: string;
  cause?: unknown;
}

export class StewardError extends Error {
  readonly clientMessage: string;

  constructor(
    readonly status: number,
    message: string,
    options: StewardErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.clientMessage = options.clientMessage ?? message;
  }
}

export class BadRequest extends StewardError {
  constructor(message: string, options?: StewardErrorOptions) {
    super(400, message, options);
  }
}

export class Forbidden extends StewardError {
  constructor(message: string, options?: StewardErrorOptions) {
    super(403, message, options);
  }
}

export class NotFound extends StewardError {
  constructor(message: string, options?: StewardErrorOptions) {
    super(404, message, options);
  }
}

export class Conflict extends StewardError {
  constructor(message: string, options?: StewardErrorOptions) {
    super(409, message, options);
  }
}

export class UnsupportedMediaType extends StewardError {
  constructor(message: string, options?: StewardErrorOptions) {
    super(415, message, options);
  }
}

export class Unprocessable extends StewardError {
  constructor(message: string, options?: StewardErrorOptions) {
    super(422, message, options);
  }
}

/** An engine answered with a failure, or could not be reached. */
export class BadGateway extends StewardError {
  constructor(message: string, options?: StewardErrorOptions) {
    super(502, message, options);
  }
}

/** Something Steward depends on (the project database) is down or refuses it for now. */
export class ServiceUnavailable extends StewardError {
  constructor(message: string, options?: StewardErrorOptions) {
    super(503, message, options);
  }
}

/** An engine did not answer in time. */
export class GatewayTimeout extends StewardError {
  constructor(message: string, options?: StewardErrorOptions) {
    super(504, message, options);
  }
}

/**
 * A QGIS document that cannot be read: XML that is not well-formed, or a project of a shape QGIS
 * does not write. Code that reads a client's upload turns it into a 400 of its own; one that
 * escapes is a stored project gone bad, which the operator must see in the log.
 */
export class DocumentFormatError extends Unprocessable {
  constructor(message: string) {
    super(message, { clientMessage: `the stored project cannot be read: ${message}` });
  }
}

/** A request without the API token, or with a wrong one. */
export class Unauthorized extends StewardError {
  constructor(message: string) {
    super(401, message);
  }
}

/** A path with a segment longer than the router takes. */
export class UriTooLong extends StewardError {
  constructor(message: string) {
    super(414, message);
  }
}
