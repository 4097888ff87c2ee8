import { ProjectFormatError } from '../qgis/project.js';
import { unzipEntries, type ZipLimits } from './zip-entries.js';
import { zipArchive } from './zip-writer.js';

/**
 * What a stored project may unpack to: QGIS writes the .qgs, its auxiliary storage (.qgd) and
 * attachments; a .qgs beyond V8's longest string (about 512 MiB) could not be parsed anyway.
 */
const PROJECT_LIMITS: ZipLimits = { entries: 1000, bytes: 1024 * 1024 * 1024 };

/**
 * A zipped QGIS project as QGIS stores it in a .qgz file or the `content` of a `qgis_projects` row:
 * one .qgs entry, possibly beside others (the auxiliary storage .qgd) that are kept as they are.
 */
export class ProjectArchive {
  private constructor(
    private readonly entries: Record<string, Uint8Array>,
    private readonly qgsName: string,
  ) {}

  /** A new archive holding only `<name>.qgs`. */
  static create(name: string, text: string): ProjectArchive {
    const archive = new ProjectArchive({}, `${name}.qgs`);
    archive.content = new TextEncoder().encode(text);
    return archive;
  }

  static open(bytes: Uint8Array): ProjectArchive {
    const unpacked = unzipEntries(
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      PROJECT_LIMITS,
      (reason) => new ProjectFormatError(`the project is not a zip archive Steward unpacks: ${reason}`),
    );
    const entries: Record<string, Uint8Array> = Object.fromEntries(unpacked);
    const qgsName = Object.keys(entries).find((entry) => entry.toLowerCase().endsWith('.qgs'));
    if (qgsName === undefined) throw new ProjectFormatError('the project archive holds no .qgs file');
    return new ProjectArchive(entries, qgsName);
  }

  /** The .qgs entry, XML in UTF-8. */
  get content(): Uint8Array {
    return this.entries[this.qgsName] as Uint8Array;
  }

  set content(content: Uint8Array) {
    this.entries[this.qgsName] = content;
  }

  /**
   * The archive, its entries deflated off the event loop: deflating a project of megabytes takes
   * a tenth of a second or more, during which reads would otherwise wait.
   */
  bytes(): Promise<Buffer> {
    return zipArchive(Object.entries(this.entries));
  }
}
