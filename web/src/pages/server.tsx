/** The settings this Steward runs with (`GET /api/server/settings`), read-only: never a secret. */
import { type ComponentChildren, Fragment, type JSX } from 'preact';

import { type Answer, api } from '../api/client';
import { ErrorMessage, Loading } from '../components/messages';
import { Page } from '../components/page';
import { ServerTabs } from '../components/server-tabs';
import { useApi } from '../components/use-api';
import { inBytes } from '../format';

type Settings = Answer<'/api/server/settings'>;

const either = (value: string | null, otherwise: string): string => value ?? otherwise;
const list = (values: string[], otherwise: string): string => (values.length > 0 ? values.join(', ') : otherwise);
const yes = (value: boolean): string => (value ? 'yes' : 'no');

function Facts({ title, facts }: { title: string; facts: Array<[string, ComponentChildren]> }): JSX.Element {
  const id = `settings-${title.toLowerCase().replace(/\W+/g, '-')}`;
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <dl class="facts">
        {facts.map(([name, value]) => (
          <Fragment key={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </Fragment>
        ))}
      </dl>
    </section>
  );
}

function SettingsCards({ settings: s }: { settings: Settings }): JSX.Element {
  const { limits } = s;
  return (
    <div class="grid-2">
      <Facts
        title="Projects and data"
        facts={[
          [
            'Storage',
            s.storage.kind === 'postgresql' ? `PostgreSQL (service ${s.storage.database_service ?? ''})` : 'files',
          ],
          ['Projects folder', s.storage.projects_dir],
          ['Data folders', list(s.data.data_roots, 'any path (STEWARD_DATA_ROOTS is not set)')],
          ['Upload folder', either(s.data.upload_root, 'none: uploads are off')],
          ['Indirect datasources (VRT, driver prefixes)', yes(s.data.indirect_datasources)],
          ['Hosts styles may take images from', list(s.data.style_remote_hosts, 'none')],
        ]}
      />
      <Facts
        title="QGIS Server"
        facts={[
          ['URL', s.qgis_server.url],
          [
            'Public OWS address',
            either(
              s.qgis_server.public_ows_url,
              'not set: projects’ service URLs are on the URL above (STEWARD_PUBLIC_OWS_URL)',
            ),
          ],
          ['FastCGI processes', list(s.qgis_server.fastcgi, 'none: maps are drawn through the URL')],
          ['Version', either(s.qgis_server.version, 'as its instances report it')],
          ['Monitoring port', s.qgis_server.monitoring_port === null ? 'off' : String(s.qgis_server.monitoring_port)],
          ['Pinned projects', list(s.qgis_server.pinned_projects, 'none')],
        ]}
      />
      <Facts
        title="Tile cache"
        facts={[
          ['MapProxy', s.cache.enabled ? 'on' : 'off'],
          ['MapProxy projects folder', either(s.cache.mapproxy_projects_dir, '–')],
          ['MapProxy URL', either(s.cache.mapproxy_url, '–')],
          ['Tiles in', s.cache.s3_bucket === null ? 'files' : `S3 bucket ${s.cache.s3_bucket}, ${s.cache.s3_dir}`],
        ]}
      />
      <Facts
        title="Object storage and access"
        facts={[
          ['S3 endpoint', either(s.object_storage.endpoint, 'AWS')],
          ['S3 region', either(s.object_storage.region, 'not set')],
          ['S3 credentials', s.object_storage.credentials_set ? 'set' : 'not set'],
          ['API token required', yes(s.access.token_required)],
          ['OpenID Connect issuer', either(s.access.oidc_issuer, 'none')],
          ['Wrong tokens a minute before refusal', String(s.access.token_failures_per_minute)],
        ]}
      />
      <Facts
        title="Limits"
        facts={[
          ['JSON body', inBytes(limits.body)],
          ['Project or data upload', inBytes(limits.publish_body)],
          ['Style upload', inBytes(limits.style_body)],
          ['Style uploads at once', inBytes(limits.upload_budget)],
          ['Processing output', inBytes(limits.processing_output)],
          ['Free space kept', inBytes(limits.min_free_space)],
          ['Projects kept in memory', inBytes(limits.project_cache)],
          ['A body may pause', `${limits.body_idle_seconds} s`],
          ['Jobs at once', String(limits.jobs_concurrency)],
        ]}
      />
      <Facts
        title="This process"
        facts={[
          ['Listens on', s.listen],
          ['Log level', s.log_level],
          [
            'Project history',
            s.history.versions === 0 ? 'off' : `${s.history.versions} versions, for ${s.history.days} days`,
          ],
        ]}
      />
    </div>
  );
}

export default function ServerPage(): JSX.Element {
  const settings = useApi((signal) => api.get('/api/server/settings', { signal }), []);
  return (
    <Page title="Server">
      <ServerTabs current="/server" />
      <p class="muted">The settings this Steward runs with, from its environment; secrets are never shown.</p>
      <ErrorMessage error={settings.error} />
      {!settings.data && settings.loading && <Loading what="the settings" />}
      {settings.data && <SettingsCards settings={settings.data} />}
    </Page>
  );
}
