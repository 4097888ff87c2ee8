/**
 * The S3 settings of the whole process, read once from the standard AWS variables and shared by
 * GDAL (`/vsis3/` datasources and outputs), the tile cache's S3 client and MapProxy, so that all of
 * them talk to the same endpoint with the same credentials.
 *
 * The endpoint is the first of `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL` (URLs, as the AWS SDKs
 * read them) and GDAL's `AWS_S3_ENDPOINT` (a URL or a bare `host[:port]`, reached over HTTPS
 * unless `AWS_HTTPS` says NO). A custom endpoint is addressed path-style (`<endpoint>/<bucket>`),
 * which every S3-compatible server accepts, unless `AWS_VIRTUAL_HOSTING` asks otherwise.
 */
type Env = Readonly<Record<string, string | undefined>>;

/** Where the S3 API is: AWS itself when nothing is set, or an S3-compatible server. */
export interface S3Endpoint {
  /** `http(s)://host[:port]`; undefined for AWS. */
  url: string | undefined;
  region: string | undefined;
}

export interface S3Settings {
  endpoint: S3Endpoint;
  /** Buckets addressed as `<endpoint>/<bucket>` rather than `<bucket>.<host>`. */
  pathStyle: boolean;
  /** Credentials and request options, by their AWS variable names, as set. */
  credentials: Record<string, string>;
}

const CREDENTIALS = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_NO_SIGN_REQUEST',
  'AWS_REQUEST_PAYER',
];

/** Whether object storage is set up at all: an endpoint, a region or credentials (else GDAL's `/vsis3/` reaches nothing). */
export function objectStorageConfigured(settings: S3Settings): boolean {
  const { url, region } = settings.endpoint;
  return url !== undefined || region !== undefined || Object.keys(settings.credentials).length > 0;
}

function value(env: Env, name: string): string | undefined {
  const text = env[name]?.trim();
  return text ? text : undefined;
}

function isNo(text: string): boolean {
  return /^(no|false|off|0)$/i.test(text);
}

function endpointUrl(env: Env): string | undefined {
  const url = value(env, 'AWS_ENDPOINT_URL_S3') ?? value(env, 'AWS_ENDPOINT_URL');
  const endpoint = url ?? value(env, 'AWS_S3_ENDPOINT');
  if (endpoint === undefined) return undefined;
  const trimmed = endpoint.replace(/\/+$/, '');
  if (/^https?:\/\//i.test(trimmed)) return trimmed;
  return `${isNo(value(env, 'AWS_HTTPS') ?? 'YES') ? 'http' : 'https'}://${trimmed}`;
}

export function readS3Settings(env: Env): S3Settings {
  const credentials: Record<string, string> = {};
  for (const name of CREDENTIALS) {
    const text = value(env, name);
    if (text !== undefined) credentials[name] = text;
  }
  return {
    endpoint: { url: endpointUrl(env), region: value(env, 'AWS_REGION') ?? value(env, 'AWS_DEFAULT_REGION') },
    pathStyle: isNo(value(env, 'AWS_VIRTUAL_HOSTING') ?? 'FALSE'),
    credentials,
  };
}

/** The settings as AWS variables, for a child process (MapProxy) that reads S3 itself. */
export function s3Environment(settings: S3Settings): Record<string, string> {
  const { url, region } = settings.endpoint;
  return {
    ...settings.credentials,
    ...(region !== undefined && { AWS_REGION: region }),
    ...(url !== undefined && { AWS_ENDPOINT_URL_S3: url, AWS_ENDPOINT_URL: url }),
  };
}
