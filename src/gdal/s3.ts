/**
 * GDAL's /vsis3/ configuration options from the process's S3 settings (`src/s3-settings.ts`),
 * applied once at start.
 */
import gdal from 'gdal-async';

import { type S3Settings } from '../s3-settings.js';
import { shareWithChildren } from './gdal-child.js';

function endpointOptions(settings: S3Settings): Record<string, string> {
  const { url } = settings.endpoint;
  if (url === undefined) return {};
  const { protocol, host } = new URL(url);
  return {
    AWS_S3_ENDPOINT: host,
    AWS_HTTPS: protocol === 'https:' ? 'YES' : 'NO',
    AWS_VIRTUAL_HOSTING: settings.pathStyle ? 'FALSE' : 'TRUE',
  };
}

/** The GDAL configuration options the settings ask for. */
export function gdalS3Options(settings: S3Settings): Record<string, string> {
  const { region } = settings.endpoint;
  return {
    ...settings.credentials,
    ...(region !== undefined && { AWS_REGION: region }),
    ...endpointOptions(settings),
  };
}

/** Applies the settings to GDAL, here and in its worker processes, and returns the names set (not the values: some are secrets). */
export function configureObjectStorage(settings: S3Settings): string[] {
  const options = gdalS3Options(settings);
  for (const [name, value] of Object.entries(options)) gdal.config.set(name, value);
  shareWithChildren(options);
  return Object.keys(options);
}
