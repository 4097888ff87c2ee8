import assert from 'node:assert/strict';

import { unzipSync, zipSync } from 'fflate';

import { describe, it } from '../../test/support/node-test.js';
import { ProjectFormatError } from '../qgis/project.js';
import { ProjectArchive } from './project-archive.js';

const text = (value: string): Uint8Array => new TextEncoder().encode(value);

describe('a project archive', () => {
  it('writes a zip another reader unpacks: the new project, the other entries as they were', async () => {
    const auxiliary = Uint8Array.from({ length: 70_000 }, (_, index) => (index * 7919) % 251);
    const saved = zipSync({
      'été.qgs': text('<qgis version="old"/>'),
      'été.qgd': auxiliary,
      'empty.txt': new Uint8Array(),
    });
    const archive = ProjectArchive.open(saved);
    const project = `<qgis version="3.22.16-Białowieża">${'<maplayer/>'.repeat(50_000)}</qgis>`;
    archive.content = text(project);
    const written = await archive.bytes();
    const entries = unzipSync(written);
    assert.deepEqual(Object.keys(entries).sort(), ['empty.txt', 'été.qgd', 'été.qgs']);
    assert.equal(new TextDecoder().decode(entries['été.qgs']), project);
    assert.deepEqual(entries['été.qgd'], auxiliary);
    assert.equal(entries['empty.txt']?.length, 0);
    assert.ok(written.length < project.length / 10, `deflated: ${written.length} bytes`);
    assert.equal(new TextDecoder().decode(ProjectArchive.open(written).content), project);
  });

  it('refuses bytes that are not a project archive', () => {
    assert.throws(() => ProjectArchive.open(text('<qgis/>')), /not a zip archive/);
    assert.throws(() => ProjectArchive.open(zipSync({ 'readme.txt': text('hi') })), /holds no \.qgs/);
  });

  it('refuses, as a project it cannot read, names leaving the folder and entries that lie about their size', () => {
    const refused = (bytes: Uint8Array, reason: RegExp): void => {
      assert.throws(
        () => ProjectArchive.open(bytes),
        (error: unknown) => error instanceof ProjectFormatError && reason.test(error.message),
      );
    };
    for (const name of ['../x.qgs', '/etc/y.qgs']) refused(zipSync({ [name]: text('<qgis/>') }), /would leave/);
    const liar = Buffer.from(zipSync({ 'p.qgs': text(`<qgis>${' '.repeat(100_000)}</qgis>`) }));
    liar.writeUInt32LE(10, liar.lastIndexOf(Buffer.from('p.qgs')) - 46 + 24);
    refused(liar, /does not unpack to the 10 bytes it declares/);
  });
});
