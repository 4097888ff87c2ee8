/**
 * GDAL's /vsis3/ settings from the standard AWS variables (DESIGN.md section 1), applied once at
 * start. Endpoints may be given the AWS SDK way, as a URL in AWS_ENDPOINT_URL_S3 or
 * AWS_ENDPOINT_URL, or the GDAL way, as host[:port] in AWS_S3_ENDPOINT. A custom endpoint is
 * addressed path-style (`<endpoint>/<bucket>/<key>`), which every S3-compatible server accepts,
 * and over plain HTTP when its URL says http://. Values set explicitly in the environment for
 * AWS_HTTPS or AWS_VIRTUAL_HOSTING are kept.
 */
import gdal from 'gdal-async';

type Environment = Readonly<Record<string, string | undefined>>;

const PASSED_THROUGH = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_NO_SIGN_REQUEST',
  'AWS_REQUEST_PAYER',
];

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** host[:port] and whether to use HTTPS, from a URL or a bare GDAL-style host. */
function parseEndpoint(endpoint: string): { host: string; https: boolean | undefined } {
  const match = /^(https?):\/\/([^/]+)\/*$/i.exec(endpoint);
  if (match) return { host: match[2] as string, https: (match[1] as string).toLowerCase() === 'https' };
  return { host: endpoint.replace(/\/+$/, ''), https: undefined };
}

function endpointSettings(env: Environment): Record<string, string> {
  const endpoint =
    nonEmpty(env['AWS_ENDPOINT_URL_S3']) ?? nonEmpty(env['AWS_ENDPOINT_URL']) ?? nonEmpty(env['AWS_S3_ENDPOINT']);
  if (endpoint === undefined) return {};
  const { host, https } = parseEndpoint(endpoint);
  const settings: Record<string, string> = { AWS_S3_ENDPOINT: host };
  const explicitHttps = nonEmpty(env['AWS_HTTPS']);
  if (explicitHttps !== undefined) settings['AWS_HTTPS'] = explicitHttps;
  else if (https !== undefined) settings['AWS_HTTPS'] = https ? 'YES' : 'NO';
  settings['AWS_VIRTUAL_HOSTING'] = nonEmpty(env['AWS_VIRTUAL_HOSTING']) ?? 'FALSE';
  return settings;
}

/** The GDAL configuration options the environment asks for. */
export function objectStorageSettings(env: Environment): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const name of PASSED_THROUGH) {
    const value = nonEmpty(env[name]);
    if (value !== undefined) settings[name] = value;
  }
  const region = nonEmpty(env['AWS_REGION']) ?? nonEmpty(env['AWS_DEFAULT_REGION']);
  if (region !== undefined) settings['AWS_REGION'] = region;
  return { ...settings, ...endpointSettings(env) };
}

/** Applies the settings to GDAL and returns the names set (not the values: some are secrets). */
export function configureObjectStorage(env: Environment = process.env): string[] {
  const settings = objectStorageSettings(env);
  for (const [name, value] of Object.entries(settings)) gdal.config.set(name, value);
  return Object.keys(settings);
}
