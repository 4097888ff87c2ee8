/**
 * Failures that carry their HTTP meaning (DESIGN.md section 4). Services throw these; the HTTP
 * layer turns them into `{"error": message}` with the matching status.
 */
export class StewardError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class BadRequest extends StewardError {
  constructor(message: string) {
    super(400, message);
  }
}

export class Forbidden extends StewardError {
  constructor(message: string) {
    super(403, message);
  }
}

export class NotFound extends StewardError {
  constructor(message: string) {
    super(404, message);
  }
}

export class Conflict extends StewardError {
  constructor(message: string) {
    super(409, message);
  }
}

export class UnsupportedMediaType extends StewardError {
  constructor(message: string) {
    super(415, message);
  }
}

export class Unprocessable extends StewardError {
  constructor(message: string) {
    super(422, message);
  }
}

export class BadGateway extends StewardError {
  constructor(message: string) {
    super(502, message);
  }
}

export class GatewayTimeout extends StewardError {
  constructor(message: string) {
    super(504, message);
  }
}
