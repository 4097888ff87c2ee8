/** The settings in effect as GET /api/server/settings answers them: what an operator checks, no secret. */
import { type Config, type ServerAddress } from '../config.js';
import { BODY_LIMIT_BYTES } from '../http/app.js';
import { type ServerSettings } from '../http/routes/server.js';

/** A URL without the user and password it may carry. */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url;
  }
}

const address = ({ host, port }: ServerAddress): string => `${host.includes(':') ? `[${host}]` : host}:${port}`;

export function serverSettings(config: Config, publishBodyLimit: number): ServerSettings {
  return {
    listen: address(config.listen),
    log_level: config.logLevel,
    storage: {
      kind: config.psqlService === undefined ? 'filesystem' : 'postgresql',
      projects_dir: config.projectsDir,
      database_service: config.psqlService ?? null,
    },
    data: {
      data_roots: config.dataRoots ?? [],
      upload_root: config.uploadRoot ?? null,
      indirect_datasources: config.allowIndirectDatasources ?? false,
      style_remote_hosts: config.styleRemoteHosts ?? [],
    },
    qgis_server: {
      url: withoutCredentials(config.qgisServerUrl),
      public_ows_url: config.publicOwsUrl ?? null,
      fastcgi: (config.qgisServerFcgi ?? []).map(address),
      version: config.qgisServerVersion ?? null,
      monitoring_port: config.monitoringPort ?? null,
      pinned_projects: config.pinnedProjects ?? [],
    },
    cache: {
      enabled: config.mapproxyProjectsDir !== undefined,
      mapproxy_projects_dir: config.mapproxyProjectsDir ?? null,
      mapproxy_url: config.mapproxyUrl ?? null,
      s3_bucket: config.cacheS3Bucket ?? null,
      s3_dir: config.cacheS3Dir,
    },
    object_storage: {
      endpoint: config.s3.endpoint.url === undefined ? null : withoutCredentials(config.s3.endpoint.url),
      region: config.s3.endpoint.region ?? null,
      credentials_set: Object.keys(config.s3.credentials).length > 0,
    },
    access: {
      token_required: config.apiToken !== undefined,
      oidc_issuer: config.oidc?.issuer ?? null,
      token_failures_per_minute: config.tokenFailures,
    },
    limits: {
      body: BODY_LIMIT_BYTES,
      publish_body: publishBodyLimit,
      style_body: config.styleBodyLimit,
      upload_budget: config.uploadBudget,
      processing_output: config.processingOutputLimit,
      min_free_space: config.minFreeSpace,
      project_cache: config.projectCacheBytes,
      body_idle_seconds: config.bodyIdleSeconds,
      jobs_concurrency: config.jobsConcurrency,
    },
    history: config.history,
  };
}
