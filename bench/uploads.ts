/**
 * Streamed uploads: a bundle of a project and a GeoTIFF of random bytes published with
 * `PUT /api/projects/{p}/archive`, and the GeoTIFF alone with `PUT /api/data/{path}`, each timed
 * against `cp` of the same files to the same disk, with the API's peak resident memory over the
 * upload and the latency of reads of another project meanwhile. The API runs as a process of its
 * own, as in production.
 *
 * The target compares with `cp` then `sync`: Steward flushes every file it publishes before a
 * project reads it (a crash must not leave a project reading half-written files), while `cp` alone
 * ends with its bytes still in the page cache, so it measures memory's pace, not the disk's. Each
 * run publishes a new project, as each `cp` makes a new folder: replacing one would also time the
 * removal of the last run's files, which `cp`'s runs do untimed.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { startApiProcess } from '../test/support/api-process.js';
import { processMemory, resetPeak, servingProcess, writeRandomGeoTiff } from '../test/support/large-upload.js';
import { cpuSeconds, mainThreadCpuSeconds } from './cpu.js';
import { median, ms, summarise, table } from './stats.js';

/** Bytes of the GeoTIFF (STEWARD_BENCH_UPLOAD_MIB, default 1024 MiB as the target names). */
const SIZE_MIB = Number(process.env['STEWARD_BENCH_UPLOAD_MIB'] ?? 1024);
const RUNS = 3;
const TARGET_SHARE_OF_CP = 0.8;
const TARGET_RSS_MIB = 64;
const TARGET_P99_MS = 5;

/** Milliseconds `work` takes. */
async function timed(work: () => unknown): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/** Reads `url` one request after another until `running()` is false; each read's latency in ms. */
async function readWhile(url: string, running: () => boolean): Promise<number[]> {
  const samples: number[] = [];
  while (running()) {
    const start = performance.now();
    const reply = await fetch(url);
    await reply.arrayBuffer();
    samples.push(performance.now() - start);
    if (reply.status !== 200) throw new Error(`read answered ${reply.status}`);
  }
  return samples;
}

const execFileAsync = promisify(execFile);

/**
 * PUTs the file at `path` to `url` with curl, as a client on another machine would send it: the
 * bench's own Node HTTP client spent 2 s of CPU a GiB here against curl's 0.5 s, on the two cores
 * the API has, which timed the client as much as the API. Not `execFileSync`: the reads the bench
 * makes meanwhile run on this process's event loop.
 */
async function curlPut(url: string, path: string): Promise<{ status: number; body: string }> {
  const { stdout } = await execFileAsync(
    'curl',
    ['-sS', '-T', path, '-H', 'Expect:', '-H', 'content-type: application/octet-stream', '-w', '\n%{http_code}', url],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const cut = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

function rate(mib: number, times: number[]): string {
  return `${(mib / (median(times) / 1000)).toFixed(0)} MiB/s (${ms(median(times))} ms)`;
}

export async function runUploadsBench(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'steward-bench-uploads-'));
  const uploads = join(folder, 'uploads');
  await mkdir(uploads);
  const api = await startApiProcess({
    STEWARD_QGISSERVER_URL: 'http://127.0.0.1:9/',
    STEWARD_QGISSERVER_PROJECTS_DIR: join(folder, 'projects'),
    STEWARD_DATA_ROOTS: uploads,
    STEWARD_UPLOAD_ROOT: uploads,
    STEWARD_PUBLISH_BODY_LIMIT: `${SIZE_MIB + 64}M`,
  });
  try {
    const server = servingProcess(api.pid);
    for (const name of ['seed', 'other']) await api.call('POST', '/api/projects/', { name, author: 'bench' });
    const source = join(folder, 'desktop');
    await mkdir(join(source, 'data'), { recursive: true });
    const seed = await fetch(`${api.url}/api/projects/seed/archive`);
    await writeFile(join(source, 'project.qgz'), Buffer.from(await seed.arrayBuffer()));
    const tiff = writeRandomGeoTiff(join(source, 'data', 'large.tif'), SIZE_MIB * 1024 * 1024);
    const bundle = join(folder, 'bundle.zip');
    execFileSync('zip', ['-0', '-q', '-r', bundle, 'project.qgz', 'data'], { cwd: source });

    const times = { cp: [] as number[], cpSync: [] as number[], bundle: [] as number[], file: [] as number[] };
    const bundleCpu: number[] = [];
    const bundleLoopCpu: number[] = [];
    const fileCpu: number[] = [];
    const fileLoopCpu: number[] = [];
    const rss: number[] = [];
    const reads: number[] = [];
    const fileReads: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const copy = join(folder, `copy-${run}`);
      times.cp.push(await timed(() => execFileSync('cp', ['-r', join(source, 'data'), copy])));
      await rm(copy, { recursive: true });
      times.cpSync.push(
        await timed(() => {
          execFileSync('cp', ['-r', join(source, 'data'), copy]);
          execFileSync('sync', [join(copy, 'large.tif')]);
        }),
      );
      await rm(copy, { recursive: true });
      const before = processMemory(server).rss;
      await resetPeak(server);
      let uploading = true;
      const reading = readWhile(`${api.url}/api/projects/other`, () => uploading);
      const cpu = cpuSeconds([server]);
      const loopCpu = mainThreadCpuSeconds(server);
      times.bundle.push(
        await timed(async () => {
          const reply = await curlPut(`${api.url}/api/projects/bench-${run}/archive?allow_broken=true`, bundle);
          if (reply.status >= 300) throw new Error(`the bundle upload answered ${reply.status}: ${reply.body}`);
        }),
      );
      uploading = false;
      bundleCpu.push(cpuSeconds([server]) - cpu);
      bundleLoopCpu.push(mainThreadCpuSeconds(server) - loopCpu);
      reads.push(...(await reading));
      rss.push(processMemory(server).peak - before);
      uploading = true;
      const readingDuringFile = readWhile(`${api.url}/api/projects/other`, () => uploading);
      const fileCpuBefore = cpuSeconds([server]);
      const fileLoopCpuBefore = mainThreadCpuSeconds(server);
      times.file.push(
        await timed(async () => {
          const reply = await curlPut(`${api.url}/api/data/bench/large.tif`, tiff);
          if (reply.status >= 300) throw new Error(`the data upload answered ${reply.status}: ${reply.body}`);
        }),
      );
      uploading = false;
      fileCpu.push(cpuSeconds([server]) - fileCpuBefore);
      fileLoopCpu.push(mainThreadCpuSeconds(server) - fileLoopCpuBefore);
      fileReads.push(...(await readingDuringFile));
    }
    const share = median(times.cpSync) / median(times.bundle);
    const growthMib = Math.max(...rss) / 1024;
    const during = summarise(reads);
    const duringFile = summarise(fileReads);
    const fileShare = median(times.cpSync) / median(times.file);
    return [
      '## Streamed uploads',
      '',
      `A bundle (\`zip -0\`) of a project and a ${SIZE_MIB} MiB GeoTIFF of random bytes published as a new project with \`PUT /api/projects/bench-N/archive\` (unpacked into the upload root as it arrives, flushed), and the GeoTIFF alone with \`PUT /api/data/bench/large.tif\`; medians of ${RUNS} runs on the same disk, while one client reads \`GET /api/projects/other\` over and over (the reads during each kind of upload counted apart). The target compares with \`cp\` then \`sync\`, as Steward flushes what it publishes and \`cp\` alone leaves its bytes in the page cache.`,
      '',
      table(
        ['Work', 'Rate (median)', 'Target'],
        [
          ['`cp -r` of the files', rate(SIZE_MIB, times.cp), '-'],
          ['`cp -r` then `sync` of the files', rate(SIZE_MIB, times.cpSync), '-'],
          [
            'bundle upload (`PUT .../archive`)',
            `${rate(SIZE_MIB, times.bundle)}, API CPU ${median(bundleCpu).toFixed(2)} s (event loop ${median(bundleLoopCpu).toFixed(2)} s)`,
            `>= ${TARGET_SHARE_OF_CP * 100}% of cp then sync: ${(share * 100).toFixed(0)}%, ${share >= TARGET_SHARE_OF_CP ? 'met' : 'NOT met'}`,
          ],
          [
            'data file upload (`PUT /api/data/...`)',
            `${rate(SIZE_MIB, times.file)}, API CPU ${median(fileCpu).toFixed(2)} s (event loop ${median(fileLoopCpu).toFixed(2)} s)`,
            `${(fileShare * 100).toFixed(0)}% of cp then sync`,
          ],
          [
            "API's peak RSS growth during a bundle upload",
            `${growthMib.toFixed(1)} MiB`,
            `<= ${TARGET_RSS_MIB} MiB: ${growthMib <= TARGET_RSS_MIB ? 'met' : 'NOT met'}`,
          ],
          [
            `reads of another project during the bundle uploads (${reads.length})`,
            `p99 ${ms(during.p99)} ms (median ${ms(during.median)} ms)`,
            `p99 < ${TARGET_P99_MS} ms: ${during.p99 < TARGET_P99_MS ? 'met' : 'NOT met'}`,
          ],
          [
            `reads of another project during the data file uploads (${fileReads.length})`,
            `p99 ${ms(duringFile.p99)} ms (median ${ms(duringFile.median)} ms)`,
            `p99 < ${TARGET_P99_MS} ms: ${duringFile.p99 < TARGET_P99_MS ? 'met' : 'NOT met'}`,
          ],
        ],
      ),
    ].join('\n');
  } finally {
    await api.kill();
    await rm(folder, { recursive: true, force: true });
  }
}
