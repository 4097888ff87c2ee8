type Env = Readonly<Record<string, string | undefined>>;

/** Where the S3 API is: AWS itself when nothing is set, or an S3-compatible server. */
export interface S3Endpoint {
  /** `http(s)://host:port`; undefined for AWS. */
  url: string | undefined;
  region: string | undefined;
}

function value(env: Env, name: string): string | undefined {
  const text = env[name]?.trim();
  return text ? text : undefined;
}

/**
 * The endpoint from the standard variables: `AWS_ENDPOINT_URL`, or GDAL's `AWS_S3_ENDPOINT`
 * (a bare `host:port`, over HTTPS unless `AWS_HTTPS` is `NO`, as GDAL reads it).
 */
export function s3EndpointFromEnv(env: Env): S3Endpoint {
  const region = value(env, 'AWS_REGION') ?? value(env, 'AWS_DEFAULT_REGION');
  const url = value(env, 'AWS_ENDPOINT_URL');
  if (url) return { url, region };
  const host = value(env, 'AWS_S3_ENDPOINT');
  if (!host) return { url: undefined, region };
  if (/^https?:\/\//i.test(host)) return { url: host, region };
  const https = !/^(no|false|off|0)$/i.test(value(env, 'AWS_HTTPS') ?? 'YES');
  return { url: `${https ? 'https' : 'http'}://${host}`, region };
}
