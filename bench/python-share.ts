/**
 * The share of a process's CPU time spent in Python, from `perf` samples whose call stacks
 * (unwound with DWARF) pass through the Python interpreter, sip, PyQt or PyQGIS's bindings. In a
 * QGIS Server whose only Python is the monitoring plugin, that is the plugin's own cost, measured
 * inside the process: the machine's other load moves it much less than CPU time per map.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const PYTHON_FRAME = /libpython3|\/sip\.cpython|\/PyQt5\/|\/qgis\/_\w+\.cpython/;
const SAMPLES_PER_SECOND = 999;
/** perf needs a moment to attach to the process before the work starts. */
const ATTACH_MS = 500;

/** Of the samples `perf script` printed (stacks separated by blank lines), the share with a Python frame. */
export function shareWithPython(script: string): number {
  const samples = script.split(/\n\s*\n/).filter((sample) => sample.trim() !== '');
  const python = samples.filter((sample) => PYTHON_FRAME.test(sample)).length;
  return samples.length === 0 ? Number.NaN : python / samples.length;
}

/**
 * Samples process `pid` while `work` runs; the share of its samples in Python, or undefined when
 * perf is not installed or may not watch the process.
 */
export async function pythonShare(pid: number, work: () => Promise<unknown>): Promise<number | undefined> {
  const dir = mkdtempSync(join(tmpdir(), 'steward-bench-perf-'));
  const data = join(dir, 'perf.data');
  try {
    const args = ['record', '-q', '-F', String(SAMPLES_PER_SECOND), '--call-graph', 'dwarf,8192'];
    const perf = spawn('perf', [...args, '-p', String(pid), '-o', data], { stdio: 'ignore' });
    const exited = once(perf, 'exit').catch(() => [null]);
    const failed = await Promise.race([exited.then(() => true), sleep(ATTACH_MS).then(() => false)]);
    if (failed) return undefined;
    await work();
    perf.kill('SIGINT'); // perf writes its data, then ends by the signal
    const [code, signal] = (await exited) as [number | null, NodeJS.Signals | null];
    if (code !== 0 && signal !== 'SIGINT') return undefined;
    const { stdout } = await promisify(execFile)('perf', ['script', '-i', data, '-F', 'ip,dso'], {
      maxBuffer: 1024 * 1024 * 1024,
    });
    return shareWithPython(stdout);
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
