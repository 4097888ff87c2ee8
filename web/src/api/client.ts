/**
 * A typed client of Steward's API. Paths, parameters, bodies and answers come from schema.d.ts,
 * which openapi-typescript generates from the API's own OpenAPI description, so a change of the API
 * that the console does not follow fails the typecheck.
 */
import { accessMayHaveChanged } from './access-changes';
import { type ErrorCode, type Refusal, refusalInWords } from './error-words';
import type { paths } from './schema';
import { authorization, tokenRefused } from './token';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type PathWith<M extends Method> = {
  [P in keyof paths]: paths[P][M] extends { responses: unknown } ? P : never;
}[keyof paths];
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

type Parameters<O> = O extends { parameters: infer X } ? X : never;
type PathParameters<O> = Parameters<O> extends { path: infer X } ? X : undefined;
type QueryParameters<O> = Parameters<O> extends { query?: infer Q } ? Q : undefined;
type Json<R> = R extends { content: { 'application/json': infer J } } ? J : unknown;
type RequestBody<O> = O extends { requestBody?: infer B } ? Json<NonNullable<B>> : undefined;
type Success<O> = O extends { responses: infer R }
  ? 200 extends keyof R
    ? Json<R[200]>
    : 201 extends keyof R
      ? Json<R[201]>
      : 202 extends keyof R
        ? Json<R[202]>
        : unknown
  : unknown;

export interface RequestOptions<O> {
  path?: PathParameters<O>;
  query?: QueryParameters<O>;
  body?: RequestBody<O>;
  signal?: AbortSignal;
  /** A token to try instead of the one kept. */
  token?: string;
}

/**
 * An answer other than 2xx: its status, the API's code (docs/errors.md) for pages to decide on,
 * and its message in words a person can act on.
 */
export class ApiError extends Error {
  readonly code: ErrorCode | undefined;

  constructor(
    readonly status: number,
    refusal: Refusal,
  ) {
    super(refusal.words);
    this.name = 'ApiError';
    this.code = refusal.code;
  }
}

/** The URL of an API path with its `{name}` parameters filled in and its query appended. */
export function apiUrl(template: string, path?: object, query?: object): string {
  const filled = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = (path as Record<string, string | number | undefined> | undefined)?.[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${template}`);
    return encodeURIComponent(value);
  });
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries((query ?? {}) as Record<string, string | number | undefined>)) {
    if (value !== undefined && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return text === '' ? filled : `${filled}?${text}`;
}

async function errorOf(response: Response): Promise<ApiError> {
  return new ApiError(response.status, refusalInWords(response.status, response.statusText, await response.text()));
}

/**
 * PUTs a file with the bearer token, telling `onProgress` the share sent (fetch cannot follow an
 * upload); the answer's JSON, or the ApiError `send` would throw.
 */
export function putWithProgress(url: string, file: Blob, onProgress: (fraction: number) => void): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('PUT', url);
    request.setRequestHeader('content-type', 'application/octet-stream');
    const bearer = authorization();
    if (bearer) request.setRequestHeader('authorization', bearer);
    request.upload.onprogress = (event) => {
      if (event.lengthComputable && event.total > 0) onProgress(event.loaded / event.total);
    };
    request.onerror = () => reject(new Error('The upload did not reach Steward: the connection failed. Try again.'));
    request.onload = () => {
      told(request.status);
      if (request.status < 200 || request.status > 299)
        return reject(
          new ApiError(request.status, refusalInWords(request.status, request.statusText, request.responseText)),
        );
      try {
        resolve(JSON.parse(request.responseText) as unknown);
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    };
    request.send(file);
  });
}

/** A 401 asks the person for a (new) token; a 403 has the console ask again what the identity may do. */
function told(status: number): void {
  if (status === 401) tokenRefused();
  if (status === 403) accessMayHaveChanged();
}

/** Sends a request with the bearer token, telling `told` its status. */
export async function send(url: string, init: RequestInit = {}, token?: string): Promise<Response> {
  const headers = new Headers(init.headers);
  const bearer = token === undefined ? authorization() : `Bearer ${token}`;
  if (bearer) headers.set('authorization', bearer);
  const response = await fetch(url, { ...init, headers });
  told(response.status);
  if (!response.ok) throw await errorOf(response);
  return response;
}

async function call<O>(method: Method, template: string, options: RequestOptions<O> = {}): Promise<Success<O>> {
  const hasBody = options.body !== undefined;
  const response = await send(
    apiUrl(template, options.path ?? undefined, options.query ?? undefined),
    {
      method: method.toUpperCase(),
      headers: hasBody ? { 'content-type': 'application/json' } : {},
      body: hasBody ? JSON.stringify(options.body) : null,
      signal: options.signal ?? null,
    },
    options.token,
  );
  return (await response.json()) as Success<O>;
}

export const api = {
  get: <P extends PathWith<'get'>>(path: P, options?: RequestOptions<Operation<P, 'get'>>) =>
    call<Operation<P, 'get'>>('get', path, options),
  post: <P extends PathWith<'post'>>(path: P, options?: RequestOptions<Operation<P, 'post'>>) =>
    call<Operation<P, 'post'>>('post', path, options),
  put: <P extends PathWith<'put'>>(path: P, options?: RequestOptions<Operation<P, 'put'>>) =>
    call<Operation<P, 'put'>>('put', path, options),
  patch: <P extends PathWith<'patch'>>(path: P, options?: RequestOptions<Operation<P, 'patch'>>) =>
    call<Operation<P, 'patch'>>('patch', path, options),
  delete: <P extends PathWith<'delete'>>(path: P, options?: RequestOptions<Operation<P, 'delete'>>) =>
    call<Operation<P, 'delete'>>('delete', path, options),
};

/** The success answer of an operation, for components that keep it. */
export type Answer<P extends keyof paths, M extends Method = 'get'> = Success<Operation<P, M>>;
export type Body<P extends keyof paths, M extends Method = 'post'> = RequestBody<Operation<P, M>>;
