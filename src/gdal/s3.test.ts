import assert from 'node:assert/strict';

import { describe, test } from '../../test/support/node-test.js';
import { readS3Settings } from '../s3-settings.js';
import { gdalS3Options } from './s3.js';

const objectStorageSettings = (env: Record<string, string>): Record<string, string> =>
  gdalS3Options(readS3Settings(env));

describe('object storage settings', () => {
  test('point GDAL at an http:// endpoint path-style, over plain HTTP', () => {
    const settings = objectStorageSettings({
      AWS_ACCESS_KEY_ID: 'key',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_REGION: 'eu-west-3',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9000/',
    });
    assert.deepEqual(settings, {
      AWS_ACCESS_KEY_ID: 'key',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_REGION: 'eu-west-3',
      AWS_S3_ENDPOINT: '127.0.0.1:9000',
      AWS_HTTPS: 'NO',
      AWS_VIRTUAL_HOSTING: 'FALSE',
    });
  });

  test('prefer the S3-specific endpoint, and keep explicit HTTPS and hosting choices', () => {
    const settings = objectStorageSettings({
      AWS_ENDPOINT_URL: 'http://other:1',
      AWS_ENDPOINT_URL_S3: 'https://minio.example.org',
      AWS_VIRTUAL_HOSTING: 'TRUE',
      AWS_DEFAULT_REGION: 'us-west-2',
    });
    assert.deepEqual(settings, {
      AWS_REGION: 'us-west-2',
      AWS_S3_ENDPOINT: 'minio.example.org',
      AWS_HTTPS: 'YES',
      AWS_VIRTUAL_HOSTING: 'TRUE',
    });
  });

  test("accept GDAL's own host:port endpoint", () => {
    assert.deepEqual(objectStorageSettings({ AWS_S3_ENDPOINT: 'storage:9000', AWS_HTTPS: 'NO' }), {
      AWS_S3_ENDPOINT: 'storage:9000',
      AWS_HTTPS: 'NO',
      AWS_VIRTUAL_HOSTING: 'FALSE',
    });
  });

  test('set nothing without AWS variables, and ignore empty ones', () => {
    assert.deepEqual(objectStorageSettings({}), {});
    assert.deepEqual(objectStorageSettings({ AWS_ENDPOINT_URL: ' ', AWS_REGION: '' }), {});
  });
});
