/** The QGIS Server instances registered through the monitoring plugin: the table `steward ps` prints. */
import type { JSX } from 'preact';

import { api } from '../api/client';
import { FleetProjects } from '../components/fleet-projects';
import { ErrorMessage, Loading } from '../components/messages';
import { Page } from '../components/page';
import { TableHead } from '../components/table-head';
import { useApi, useInterval } from '../components/use-api';
import { Link } from '../router';

export const REFRESH_MS = 2000;

export default function InstancesPage(): JSX.Element {
  const server = useApi((signal) => api.get('/api/server', { signal }), []);
  return (
    <Page title="Instances">
      <p class="muted">
        QGIS Server processes that loaded the steward_monitor plugin and registered with this Steward. The table
        refreshes every {REFRESH_MS / 1000} seconds.
      </p>
      <ErrorMessage error={server.error} />
      {server.data?.monitoring === false && (
        <p class="card muted">
          Monitoring is not enabled on this Steward: set STEWARD_QGISSERVER_MONITORING_PORT for instances to register.
        </p>
      )}
      {server.data?.monitoring && (
        <>
          <InstanceTable />
          <FleetProjects />
        </>
      )}
    </Page>
  );
}

function InstanceTable(): JSX.Element {
  const instances = useApi((signal) => api.get('/api/instances', { signal }), []);
  useInterval(instances.reload, REFRESH_MS);
  const servers = instances.data?.servers;
  return (
    <>
      <ErrorMessage error={instances.error} />
      {!servers && instances.loading && <Loading what="instances" />}
      {servers && servers.length === 0 && (
        <p class="card muted">
          No instance has registered yet: start QGIS Server with the plugin folder in QGIS_PLUGINPATH and STEWARD_HOST
          and STEWARD_PORT pointing at this Steward's monitoring port.
        </p>
      )}
      {servers && servers.length > 0 && (
        <table class="table">
          <TableHead caption="Registered instances" columns={['Instance ID', 'IP', 'Status']} />
          <tbody>
            {servers.map((server) => (
              <tr key={server.id}>
                <td>
                  <Link href={`/instances/${encodeURIComponent(server.id)}`}>{server.id}</Link>
                </td>
                <td>{server.ip}</td>
                <td>
                  Binded {server.binded} seconds ago{' '}
                  <span class="muted">(registered {new Date(server.registered_at).toLocaleString()})</span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
