import { type _Object, DeleteObjectsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';

import { BadGateway } from '../errors.js';
import { type S3Endpoint } from '../s3-settings.js';
import { pathSegment } from './layout.js';
import { type TileStore, type TileUsage } from './tile-store.js';
import { type YamlMapping } from './yaml.js';

export interface S3TileLocation {
  bucket: string;
  /** `STEWARD_MAPPROXY_CACHE_S3_DIR`: the key prefix of every project's tiles. */
  directory: string;
  endpoint: S3Endpoint;
  /** Buckets addressed as `<endpoint>/<bucket>` (the default) rather than `<bucket>.<host>`. */
  pathStyle?: boolean;
}

function s3Client(location: S3TileLocation): S3Client {
  const { url, region } = location.endpoint;
  return new S3Client({
    region: region ?? 'us-east-1',
    ...(url === undefined ? {} : { endpoint: url, forcePathStyle: location.pathStyle ?? true }),
  });
}

/**
 * Tiles as objects of one bucket, under `<directory>/<app>/<layer>/z/x/y.png`. MapProxy strips the
 * leading slash of `directory` from its keys, so prefixes here have none.
 */
export class S3Tiles implements TileStore {
  readonly kind = 's3' as const;
  readonly supportsDimensions = false;
  private readonly root: string;

  constructor(
    private readonly location: S3TileLocation,
    private readonly client: S3Client = s3Client(location),
  ) {
    this.root = location.directory
      .split('/')
      .filter((part) => part !== '')
      .join('/');
  }

  /** The key prefix of the project's tiles, or of one layer's. */
  prefix(app: string, layer?: string): string {
    const parts = [this.root, pathSegment(app), ...(layer === undefined ? [] : [pathSegment(layer)])];
    return parts.filter((part) => part !== '').join('/');
  }

  cacheOptions(app: string, layer: string): YamlMapping {
    return { type: 's3', directory: `/${this.prefix(app, layer)}`, directory_layout: 'tms' };
  }

  globalCacheOptions(): YamlMapping {
    const { url, region } = this.location.endpoint;
    return {
      s3: {
        bucket_name: this.location.bucket,
        ...(url === undefined ? {} : { endpoint_url: url }),
        ...(region === undefined ? {} : { region_name: region }),
      },
    };
  }

  clearLayer(app: string, layer: string): Promise<void> {
    return this.deletePrefix(`${this.prefix(app, layer)}/`);
  }

  clearLevel(app: string, layer: string, level: number): Promise<void> {
    return this.deletePrefix(`${this.prefix(app, layer)}/${level}/`);
  }

  clearProject(app: string): Promise<void> {
    return this.deletePrefix(`${this.prefix(app)}/`);
  }

  async usage(app: string, layer: string): Promise<TileUsage> {
    const usage = { tiles: 0, bytes: 0 };
    await this.eachPage(`${this.prefix(app, layer)}/`, 'measured', async (objects) => {
      usage.tiles += objects.length;
      usage.bytes += objects.reduce((sum, object) => sum + (object.Size ?? 0), 0);
    });
    return usage;
  }

  close(): void {
    this.client.destroy();
  }

  private deletePrefix(prefix: string): Promise<void> {
    const Bucket = this.location.bucket;
    return this.eachPage(prefix, 'deleted', async (objects) => {
      const keys = objects.flatMap((object) => (object.Key === undefined ? [] : [{ Key: object.Key }]));
      if (keys.length === 0) return;
      const result = await this.client.send(
        new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys, Quiet: true } }),
      );
      const failure = result.Errors?.[0];
      if (failure) throw new Error(`${failure.Key}: ${failure.Message ?? failure.Code}`);
    });
  }

  /** Calls `work` with each page of the objects under `prefix`; a failure is a 502 saying what could not be `done`. */
  private async eachPage(prefix: string, done: string, work: (objects: _Object[]) => Promise<void>): Promise<void> {
    const Bucket = this.location.bucket;
    try {
      let token: string | undefined;
      do {
        const page = await this.client.send(
          new ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken: token }),
        );
        await work(page.Contents ?? []);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token !== undefined);
    } catch (error) {
      const failed = `the cached tiles under s3://${Bucket}/${prefix} could not be ${done}`;
      throw new BadGateway(`${failed}: ${(error as Error).message}`, {
        clientMessage: `${failed}; Steward's log says why`,
      });
    }
  }
}
