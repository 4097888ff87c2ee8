/** A local S3-compatible server (s3rver) on a free loopback port, in a child process. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./s3rver-process.mjs', import.meta.url));

export interface S3Process {
  bucket: string;
  /** The AWS variables that point Steward at the server. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startS3Process(bucket: string): Promise<S3Process> {
  const directory = await mkdtemp(join(tmpdir(), 'steward-s3-'));
  const child = spawn(process.execPath, [SCRIPT, directory, bucket], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await Promise.race([once(child.stdout, 'data'), once(child, 'exit')])) as [Buffer | number];
  const port = Number(String(line).trim());
  if (!Number.isInteger(port) || port <= 0) throw new Error('s3rver did not start');
  return {
    bucket,
    env: {
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
      AWS_ENDPOINT_URL: `http://127.0.0.1:${port}`,
      AWS_REGION: 'us-east-1',
    },
    async stop() {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
      await rm(directory, { recursive: true, force: true });
    },
  };
}
