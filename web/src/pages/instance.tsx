/**
 * One QGIS Server instance: its metadata, a live chart of its request statistics, the projects in
 * its cache, its process and settings, and its log, following new lines.
 */
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

import { type Answer, api, ApiError } from '../api/client';
import { Chart } from '../components/chart';
import { CachedProjects, InstanceAbout } from '../components/instance-details';
import { ErrorMessage, Loading } from '../components/messages';
import { Page } from '../components/page';
import { useApi, useInterval } from '../components/use-api';
import { useCursorLines } from '../components/use-cursor-lines';
import { Link } from '../router';
import type { PageProps } from '../routes';

type Stats = Answer<'/api/instances/{instance}/stats'>;
type Metadata = Answer<'/api/instances/{instance}'>;

const STATS_MS = 1000;
const LOG_MS = 2000;
/** Log lines the page keeps: as many as the plugin does. */
const KEPT_LINES = 1000;
/** Samples the chart keeps: two minutes at one a second. */
const KEPT = 120;

interface Sample {
  time: number;
  stats: Stats;
}

/** Whether a failure says the instance is no longer registered (it stopped, or never was). */
function isGone(error: Error | undefined): boolean {
  return error instanceof ApiError && error.status === 404;
}

export default function InstancePage({ params }: PageProps): JSX.Element {
  const id = params['instance'] ?? '';
  const path = { instance: id };
  const metadata = useApi((signal) => api.get('/api/instances/{instance}', { path, signal }), [id]);
  // The address it registered from, known while it is listed: its successor registers from it too.
  const listed = useApi((signal) => api.get('/api/instances', { signal }), [id]);
  const [gone, setGone] = useState(false);
  const ip = listed.data?.servers.find((server) => server.id === id)?.ip;
  const onError = (error: Error | undefined): void => {
    if (isGone(error)) setGone(true);
  };
  useEffect(() => {
    if (gone) listed.reload();
  }, [gone]);
  return (
    <Page title={`Instance ${id}`}>
      <p class="breadcrumb">
        <Link href="/instances">Instances</Link> / {id}
      </p>
      {gone && <GoneNotice id={id} ip={ip} servers={listed.data?.servers ?? []} />}
      <div class="grid-2">
        <section class="card" aria-labelledby="stats-title">
          <h2 id="stats-title">Requests</h2>
          <LiveStats id={id} live={!gone} onError={onError} />
        </section>
        <section class="card" aria-labelledby="metadata-title">
          <h2 id="metadata-title">Metadata</h2>
          <ErrorMessage error={metadata.error} />
          {!metadata.data && metadata.loading && <Loading what="metadata" />}
          {metadata.data && <MetadataFacts metadata={metadata.data} />}
        </section>
      </div>
      <section class="card" aria-labelledby="cached-title">
        <h2 id="cached-title">Cached projects</h2>
        <CachedProjects id={id} />
      </section>
      <section class="card" aria-labelledby="about-title">
        <h2 id="about-title">Process and settings</h2>
        <InstanceAbout id={id} />
      </section>
      <section class="card" aria-labelledby="log-title">
        <h2 id="log-title">Log</h2>
        <FollowedLog id={id} live={!gone} onError={onError} />
      </section>
    </Page>
  );
}

/** Says that the instance is gone, and links the instances now registered from its address. */
function GoneNotice(props: {
  id: string;
  ip: string | undefined;
  servers: Array<{ id: string; ip: string }>;
}): JSX.Element {
  const others = props.servers.filter((server) => server.id !== props.id);
  const successors = props.ip === undefined ? others : others.filter((server) => server.ip === props.ip);
  return (
    <div class="card" role="alert">
      <p>
        Instance {props.id} is no longer registered: its QGIS Server process stopped or lost its connection. This page
        no longer asks for its statistics and log.
      </p>
      {successors.length > 0 ? (
        <p>
          {props.ip === undefined ? 'Instances registered now: ' : `Registered since from ${props.ip}: `}
          {successors.map((server, index) => (
            <span key={server.id}>
              {index > 0 && ', '}
              <Link href={`/instances/${encodeURIComponent(server.id)}`}>{server.id}</Link>
            </span>
          ))}
          .
        </p>
      ) : (
        <p>
          No other instance has registered{props.ip === undefined ? '' : ` from ${props.ip}`} yet: see{' '}
          <Link href="/instances">Instances</Link>.
        </p>
      )}
    </div>
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

interface LiveProps {
  id: string;
  /** Whether to keep polling: not once the instance is gone. */
  live: boolean;
  onError: (error: Error | undefined) => void;
}

/** Polls the statistics and charts the requests served and failed since the page opened. */
function LiveStats({ id, live, onError }: LiveProps): JSX.Element {
  const stats = useApi(
    (signal) => api.get('/api/instances/{instance}/stats', { path: { instance: id }, signal }),
    [id],
  );
  useInterval(stats.reload, STATS_MS, live);
  useEffect(() => onError(stats.error), [stats.error]);
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

/**
 * The instance's log, polled for the lines after the last ones read (all of them from a plugin
 * older than cursors); it scrolls to the newest line while “Follow” is on.
 */
function FollowedLog({ id, live, onError }: LiveProps): JSX.Element {
  const logs = useCursorLines(
    (since, signal) =>
      api.get('/api/instances/{instance}/logs', {
        path: { instance: id },
        query: since === undefined ? {} : { since: String(since) },
        signal,
      }),
    [id],
    { ms: LOG_MS, live, keep: KEPT_LINES },
  );
  useEffect(() => onError(logs.error), [logs.error]);
  const [follow, setFollow] = useState(true);
  const box = useRef<HTMLPreElement>(null);
  const lines = logs.lines;
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
