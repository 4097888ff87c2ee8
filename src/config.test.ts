import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { describe, it } from '../test/support/node-test.js';
import { ConfigError, heapBoundMb, loadConfig, parseListen } from './config.js';
import { objectStorageConfigured, readS3Settings } from './s3-settings.js';

const REQUIRED = {
  STEWARD_QGISSERVER_URL: 'http://127.0.0.1:8080/ows/',
  STEWARD_QGISSERVER_PROJECTS_DIR: '/srv/projects',
};

describe('configuration', () => {
  it('reads the documented defaults', () => {
    const config = loadConfig(REQUIRED);
    assert.equal(config.logLevel, 'info');
    assert.deepEqual(config.listen, { host: '0.0.0.0', port: 5000 });
    assert.equal(config.cacheS3Dir, '/mapproxy/cache');
    assert.equal(config.monitoringPort, undefined);
    assert.equal(config.psqlService, undefined);
    assert.equal(config.projectCacheBytes, 128 * 1024 * 1024);
    assert.equal(loadConfig({ ...REQUIRED, STEWARD_PROJECT_CACHE_MB: '512' }).projectCacheBytes, 512 * 1024 * 1024);
  });

  it('names the missing or malformed variable', () => {
    assert.throws(
      () => loadConfig({ STEWARD_QGISSERVER_URL: REQUIRED.STEWARD_QGISSERVER_URL }),
      /STEWARD_QGISSERVER_PROJECTS_DIR is required/,
    );
    for (const url of ['x', 'https://qgis.example.org/ows/', 'ftp://127.0.0.1/ows/', '127.0.0.1:8080']) {
      assert.throws(
        () => loadConfig({ ...REQUIRED, STEWARD_QGISSERVER_URL: url }),
        /STEWARD_QGISSERVER_URL must be an http:\/\/ URL/,
        url,
      );
    }
    assert.throws(() => loadConfig({ ...REQUIRED, STEWARD_LOGLEVEL: 'LOUD' }), /STEWARD_LOGLEVEL/);
    assert.throws(() => loadConfig({ ...REQUIRED, STEWARD_QGISSERVER_MONITORING_PORT: 'x' }), ConfigError);
    assert.throws(() => loadConfig({ ...REQUIRED, STEWARD_DATA_ROOTS: 'relative/dir' }), /absolute/);
    for (const size of ['0', '1.5', 'big', '-3']) {
      assert.throws(
        () => loadConfig({ ...REQUIRED, STEWARD_PROJECT_CACHE_MB: size }),
        /STEWARD_PROJECT_CACHE_MB/,
        size,
      );
    }
  });

  it('bounds the heap to the project cache and some headroom, unless told otherwise', () => {
    assert.equal(heapBoundMb({}), 128 + 256);
    assert.equal(heapBoundMb({ STEWARD_PROJECT_CACHE_MB: '512' }), 512 + 256);
    assert.equal(heapBoundMb({ STEWARD_HEAP_MB: '1024' }), 1024);
    assert.equal(heapBoundMb({ STEWARD_HEAP_MB: '0' }), undefined);
    for (const size of ['-1', '1.5', 'lots'])
      assert.throws(() => heapBoundMb({ STEWARD_HEAP_MB: size }), /STEWARD_HEAP_MB/);
    assert.throws(() => heapBoundMb({ STEWARD_HEAP_MB: '100' }), /leave room for STEWARD_PROJECT_CACHE_MB \(128\)/);
  });

  it('says object storage is set up only with an AWS_* endpoint, region or credential', () => {
    assert.equal(objectStorageConfigured(readS3Settings({})), false);
    for (const [name, value] of [
      ['AWS_REGION', 'eu-west-3'],
      ['AWS_ENDPOINT_URL', 'http://127.0.0.1:9000'],
      ['AWS_ACCESS_KEY_ID', 'key'],
    ] as const)
      assert.equal(objectStorageConfigured(readS3Settings({ [name]: value })), true, name);
  });

  it('takes the public OWS address as a base URL, refusing one with a query or credentials', () => {
    assert.equal(loadConfig(REQUIRED).publicOwsUrl, undefined);
    const url = loadConfig({ ...REQUIRED, STEWARD_PUBLIC_OWS_URL: 'https://maps.example.org/ows/' }).publicOwsUrl;
    assert.equal(url, 'https://maps.example.org/ows/');
    for (const wrong of [
      'maps.example.org/ows/',
      'ftp://maps.example.org/',
      'https://a:b@maps.example.org/ows/',
      'https://maps.example.org/ows/?MAP=x',
    ])
      assert.throws(
        () => loadConfig({ ...REQUIRED, STEWARD_PUBLIC_OWS_URL: wrong }),
        /STEWARD_PUBLIC_OWS_URL must be/,
        wrong,
      );
  });

  it('takes the administered QGIS Server version, refusing what is not one', () => {
    assert.equal(loadConfig(REQUIRED).qgisServerVersion, undefined);
    assert.equal(loadConfig({ ...REQUIRED, STEWARD_QGISSERVER_VERSION: '3.44.15' }).qgisServerVersion, '3.44.15');
    const named = loadConfig({ ...REQUIRED, STEWARD_QGISSERVER_VERSION: '3.22.16-Białowieża' }).qgisServerVersion;
    assert.equal(named, '3.22.16', 'the release name is dropped: the version goes into headers');
    for (const wrong of ['latest', '3', '3.40\r\nX: y', '1234.5'])
      assert.throws(
        () => loadConfig({ ...REQUIRED, STEWARD_QGISSERVER_VERSION: wrong }),
        (error: unknown) => error instanceof ConfigError && /STEWARD_QGISSERVER_VERSION/.test(error.message),
      );
  });

  it("reads QGIS Server's FastCGI processes, refusing a list that is not of host:port", () => {
    assert.equal(loadConfig(REQUIRED).qgisServerFcgi, undefined);
    assert.deepEqual(
      loadConfig({ ...REQUIRED, STEWARD_QGISSERVER_FCGI: '127.0.0.1:9001, qgis:9002,[::1]:9003' }).qgisServerFcgi,
      [
        { host: '127.0.0.1', port: 9001 },
        { host: 'qgis', port: 9002 },
        { host: '::1', port: 9003 },
      ],
    );
    for (const value of [
      '9001',
      '127.0.0.1',
      '127.0.0.1:0',
      '127.0.0.1:65536',
      '127.0.0.1:9001,',
      '::1:9001',
      'a b:1',
    ]) {
      assert.throws(
        () => loadConfig({ ...REQUIRED, STEWARD_QGISSERVER_FCGI: value }),
        (error: unknown) =>
          error instanceof ConfigError &&
          /^STEWARD_QGISSERVER_FCGI must list the host:port of each/.test(error.message),
        value,
      );
    }
  });

  it('takes the libpq, GDAL and QGIS Server settings QGIS Server reads during a request, in name order', () => {
    assert.deepEqual(
      loadConfig({
        ...REQUIRED,
        PGSYSCONFDIR: '/etc/steward',
        PGSERVICEFILE: '/etc/steward/pg_service.conf',
        PGPASSFILE: '',
        PGPASSWORD: 'secret',
        QGIS_SERVER_IGNORE_BAD_LAYERS: 'true',
        QGIS_PLUGINPATH: '/opt/steward/plugin',
        HOME: '/home/steward',
      }).qgisRequestSettings,
      [
        ['OGR_SQLITE_JOURNAL', 'DELETE'],
        ['OGR_SQLITE_PRAGMA', 'busy_timeout=5000'],
        ['PGSERVICEFILE', '/etc/steward/pg_service.conf'],
        ['PGSYSCONFDIR', '/etc/steward'],
        ['QGIS_SERVER_IGNORE_BAD_LAYERS', 'true'],
      ],
    );
  });

  it('parses listen addresses', () => {
    assert.deepEqual(parseListen('127.0.0.1:5001'), { host: '127.0.0.1', port: 5001 });
    assert.deepEqual(parseListen('[::1]:80'), { host: '::1', port: 80 });
    assert.deepEqual(parseListen('8080'), { host: '0.0.0.0', port: 8080 });
  });

  it('stops the server at start with one line naming a missing or malformed variable', () => {
    const start = (env: Record<string, string>): { status: number | null; stderr: string } =>
      spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'main.ts')], {
        env: { PATH: process.env['PATH'] ?? '', STEWARD_QGISSERVER_PROJECTS_DIR: '/tmp', ...env },
        encoding: 'utf8',
      });
    const missing = start({});
    assert.equal(missing.status, 2);
    assert.equal(missing.stderr.trim(), 'steward: STEWARD_QGISSERVER_URL is required but not set');
    const malformed = start({ ...REQUIRED, STEWARD_QGISSERVER_FCGI: '127.0.0.1:9001,qgis' });
    assert.equal(malformed.status, 2);
    assert.equal(
      malformed.stderr.trim(),
      'steward: STEWARD_QGISSERVER_FCGI must list the host:port of each QGIS Server FastCGI process, separated by commas (such as 127.0.0.1:9001,127.0.0.1:9002): "qgis" is not one',
    );
  });
});

describe('STEWARD_OIDC_*', () => {
  it('reads the issuer with its audience and defaults, and needs access control on', () => {
    const oidc = { STEWARD_OIDC_ISSUER: 'https://id.example.org/realms/maps', STEWARD_OIDC_AUDIENCE: 'steward' };
    assert.deepEqual(loadConfig({ ...REQUIRED, ...oidc, STEWARD_API_TOKEN: 't' }).oidc, {
      issuer: 'https://id.example.org/realms/maps',
      audience: 'steward',
      rolesClaim: 'roles',
      nameClaim: undefined,
      clientId: undefined,
      scope: 'openid profile',
    });
    assert.equal(loadConfig(REQUIRED).oidc, undefined);
    assert.throws(() => loadConfig({ ...REQUIRED, ...oidc }), /needs STEWARD_API_TOKEN/);
    assert.throws(
      () => loadConfig({ ...REQUIRED, STEWARD_API_TOKEN: 't', STEWARD_OIDC_ISSUER: oidc.STEWARD_OIDC_ISSUER }),
      /STEWARD_OIDC_AUDIENCE is required/,
    );
    assert.throws(
      () => loadConfig({ ...REQUIRED, ...oidc, STEWARD_API_TOKEN: 't', STEWARD_OIDC_ISSUER: 'id.example.org' }),
      ConfigError,
    );
  });
});
