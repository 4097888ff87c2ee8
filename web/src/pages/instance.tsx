/**
 * One QGIS Server instance: its metadata, a live chart of its request statistics and its log,
 * following new lines.
 */
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

import { type Answer, api } from '../api/client';
import { Chart } from '../components/chart';
import { ErrorMessage, Loading } from '../components/messages';
import { Page } from '../components/page';
import { useApi, useInterval } from '../components/use-api';
import { Link } from '../router';
import type { PageProps } from '../routes';

type Stats = Answer<'/api/instances/{instance}/stats'>;
type Metadata = Answer<'/api/instances/{instance}'>;

const STATS_MS = 1000;
const LOG_MS = 2000;
/** Samples the chart keeps: two minutes at one a second. */
const KEPT = 120;

interface Sample {
  time: number;
  stats: Stats;
}

export default function InstancePage({ params }: PageProps): JSX.Element {
  const id = params['instance'] ?? '';
  const path = { instance: id };
  const metadata = useApi((signal) => api.get('/api/instances/{instance}', { path, signal }), [id]);
  return (
    <Page title={`Instance ${id}`}>
      <p class="breadcrumb">
        <Link href="/instances">Instances</Link> / {id}
      </p>
      <div class="grid-2">
        <section class="card" aria-labelledby="stats-title">
          <h2 id="stats-title">Requests</h2>
          <LiveStats id={id} />
        </section>
        <section class="card" aria-labelledby="metadata-title">
          <h2 id="metadata-title">Metadata</h2>
          <ErrorMessage error={metadata.error} />
          {!metadata.data && metadata.loading && <Loading what="metadata" />}
          {metadata.data && <MetadataFacts metadata={metadata.data} />}
        </section>
      </div>
      <section class="card" aria-labelledby="log-title">
        <h2 id="log-title">Log</h2>
        <FollowedLog id={id} />
      </section>
    </Page>
  );
}

function MetadataFacts({ metadata }: { metadata: Metadata }): JSX.Element {
  const { versions } = metadata;
  return (
    <dl class="facts">
      <dt>QGIS</dt>
      <dd>
        {versions.qgis}
        {versions.qgis_release && ` ${versions.qgis_release}`}
      </dd>
      <dt>GDAL</dt>
      <dd>{versions.gdal}</dd>
      <dt>Qt</dt>
      <dd>{versions.qt}</dd>
      <dt>Python</dt>
      <dd>{versions.python}</dd>
      <dt>Plugins</dt>
      <dd>{metadata.plugins.join(', ') || 'none'}</dd>
      <dt>Providers</dt>
      <dd>{metadata.providers.join(', ')}</dd>
      <dt>Projects in cache</dt>
      <dd>{metadata.cache.projects.join(', ') || 'none'}</dd>
    </dl>
  );
}

/** Polls the statistics and charts the requests served and failed since the page opened. */
function LiveStats({ id }: { id: string }): JSX.Element {
  const stats = useApi(
    (signal) => api.get('/api/instances/{instance}/stats', { path: { instance: id }, signal }),
    [id],
  );
  useInterval(stats.reload, STATS_MS);
  const [samples, setSamples] = useState<Sample[]>([]);
  useEffect(() => {
    const current = stats.data;
    if (current) setSamples((kept) => [...kept.slice(1 - KEPT), { time: Date.now() / 1000, stats: current }]);
  }, [stats.data]);
  const last = stats.data;
  const data = [
    samples.map(({ time }) => time),
    samples.map(({ stats: s }) => s.count),
    samples.map(({ stats: s }) => s.failures ?? 0),
  ];
  return (
    <>
      <ErrorMessage error={stats.error} />
      {!last && stats.loading && <Loading what="statistics" />}
      <Chart
        title="Requests served and failed since the instance started, sampled every second"
        kind="time"
        data={data}
        series={[
          { label: 'Served', colour: '#1d5fa8' },
          { label: 'Failed', colour: '#b3261e' },
        ]}
      />
      {last && (
        <dl class="facts" aria-live="polite">
          <dt>Requests served</dt>
          <dd data-testid="requests-served">{last.count}</dd>
          <dt>Failed</dt>
          <dd>{last.failures ?? 0}</dd>
          <dt>Time serving</dt>
          <dd>{last.busy_ms ?? 0} ms</dd>
          <dt>Last request</dt>
          <dd>
            {last.service || '–'} {last.request} {last.project && `on ${last.project}`} ({last.duration} ms)
          </dd>
          <dt>By request</dt>
          <dd>
            {Object.entries(last.requests ?? {})
              .map(([request, count]) => `${request}: ${count}`)
              .join(', ') || 'none yet'}
          </dd>
        </dl>
      )}
    </>
  );
}

/** The instance's log, polled; it scrolls to the newest line while “Follow” is on. */
function FollowedLog({ id }: { id: string }): JSX.Element {
  const logs = useApi((signal) => api.get('/api/instances/{instance}/logs', { path: { instance: id }, signal }), [id]);
  useInterval(logs.reload, LOG_MS);
  const [follow, setFollow] = useState(true);
  const box = useRef<HTMLPreElement>(null);
  const lines = logs.data?.lines ?? [];
  useEffect(() => {
    const element = box.current;
    if (follow && element) element.scrollTop = element.scrollHeight;
  }, [lines.length, lines[lines.length - 1], follow]);
  return (
    <>
      <label class="check">
        <input type="checkbox" checked={follow} onChange={(event) => setFollow(event.currentTarget.checked)} />
        Follow new lines
      </label>
      <ErrorMessage error={logs.error} />
      <pre class="log" ref={box} role="log" aria-label={`Log of instance ${id}`} tabIndex={0}>
        {lines.join('\n')}
      </pre>
    </>
  );
}
