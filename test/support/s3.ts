import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

import { freePort } from '../../src/runtime/ports.js';

/** s3rver checks signatures against these credentials. */
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface LocalS3 {
  endpoint: string;
  bucket: string;
  /** The AWS variables that point a client (Steward, MapProxy's boto3) at this server. */
  env: Record<string, string>;
  /** Every key of the bucket that starts with `prefix`. */
  keys(prefix: string): Promise<string[]>;
  /** The bytes of the objects under `prefix`, each read whole. */
  bytes(prefix: string): Promise<number>;
  stop(): Promise<void>;
}

/** A local S3-compatible server on a free loopback port, its data in a temporary folder. */
export async function startLocalS3(bucket: string): Promise<LocalS3> {
  const directory = mkdtempSync(join(tmpdir(), 'steward-s3-'));
  const port = await freePort();
  const server = new S3rver({
    address: '127.0.0.1',
    port,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: CREDENTIALS });
  const keys = async (prefix: string): Promise<string[]> => {
    const found: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
      );
      found.push(...(page.Contents ?? []).flatMap((object) => (object.Key ? [object.Key] : [])));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return found;
  };
  return {
    endpoint,
    bucket,
    env: {
      AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL: endpoint,
      AWS_REGION: 'us-east-1',
    },
    keys,
    async bytes(prefix) {
      let total = 0;
      for (const key of await keys(prefix)) {
        const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
        total += (await object.Body?.transformToByteArray())?.length ?? 0;
      }
      return total;
    },
    async stop() {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
