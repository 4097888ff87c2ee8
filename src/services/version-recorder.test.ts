import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';

import { after, describe, it } from '../../test/support/node-test.js';
import { type LayerEntry } from '../qgis/project.js';
import { FilesystemStore } from '../storage/filesystem-store.js';
import { projectKey } from '../storage/project-store.js';
import { HISTORY_FILE } from '../storage/sqlite-versions.js';
import { decodeChain, decodeStyles, encodeKeyframe } from '../storage/version-codec.js';
import { decodeChainLayers } from '../storage/version-layers.js';
import { VersionRecorder } from './version-recorder.js';

const dirs: string[] = [];

function newStore(): FilesystemStore {
  const dir = mkdtempSync(join(tmpdir(), 'steward-versions-'));
  dirs.push(dir);
  return new FilesystemStore(dir);
}

/** A project of `count` layers, each a piece, as a document's encode() gives them. */
function layers(count: number): Buffer[] {
  return Array.from({ length: count }, (_, index) =>
    Buffer.from(`<maplayer id="l${index}">${'x'.repeat(200)}</maplayer>\n`),
  );
}

describe('the versions a recorder keeps', () => {
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('gives back every version byte for byte, with its styles, across keyframes, prepared during writes or not', async () => {
    const store = newStore();
    const ref = { name: 'p', schema: 'public' };
    await store.create(ref, '<qgis/>');
    const recorder = new VersionRecorder(store, { versions: 1000, days: 90 });
    let pieces = [Buffer.from('<qgis>\n'), ...layers(50), Buffer.from('</qgis>\n')];
    const expected = new Map<number, { content: Buffer; styles: Record<string, string> }>();
    const styles: Record<string, string> = {};
    for (let round = 0; round < 250; round++) {
      pieces = [...pieces];
      const at = 1 + (round % 50);
      if (round % 7 === 3) pieces.splice(at, 1);
      else if (round % 7 === 5) pieces.splice(at, 0, Buffer.from(`<maplayer id="n${round}"/>\n`));
      else pieces[at] = Buffer.from(`<maplayer id="c${round}">${'y'.repeat(round)}</maplayer>\n`);
      const change = round % 10 === 0 ? [{ name: `s${round % 30}`, qml: `<qgis round="${round}"/>` }] : [];
      for (const { name, qml } of change) styles[name] = qml;
      // As a write does: the store has the styles when the version is recorded, and the delta may
      // be made while the write is under way, or for a write that failed before this one.
      await store.styles.apply(ref, change);
      if (round % 4 === 1) recorder.prepare(ref, { pieces: [...pieces, Buffer.from('<failed/>\n')] });
      if (round % 3 === 0) recorder.prepare(ref, { pieces });
      await recorder.record(ref, { pieces, identity: `i${round}`, summary: `round ${round}`, styles: change });
      const latest = await store.versions.latest(ref);
      assert.ok(latest);
      expected.set(latest.id, { content: Buffer.concat(pieces), styles: { ...styles } });
    }
    for (const [id, version] of expected) {
      const chain = await store.versions.chain(ref, id);
      assert.ok(chain.length <= 101, `version ${id} is built from ${chain.length} rows`);
      assert.deepEqual(decodeChain(projectKey(ref), chain), version.content, `version ${id}`);
      const kept = await store.versions.styles(ref, id);
      assert.deepEqual(Object.fromEntries(kept ? decodeStyles(kept) : []), version.styles, `styles of version ${id}`);
    }
    const keyframes = (await Promise.all([...expected.keys()].map((id) => store.versions.chain(ref, id)))).filter(
      (chain) => chain.length === 1,
    );
    assert.ok(keyframes.length >= 3 && keyframes.length < 10, `${keyframes.length} keyframes`);
  });

  it('starts with a keyframe when another process wrote the newest version', async () => {
    const store = newStore();
    const ref = { name: 'shared', schema: 'public' };
    await store.create(ref, '<qgis/>');
    const one = new VersionRecorder(store);
    const other = new VersionRecorder(store);
    const versions = [layers(3), layers(4), layers(5)];
    await one.record(ref, { pieces: versions[0] as Buffer[], identity: 'a', summary: 'one', styles: [] });
    await other.record(ref, { pieces: versions[1] as Buffer[], identity: 'b', summary: 'other', styles: [] });
    await one.record(ref, { pieces: versions[2] as Buffer[], identity: 'c', summary: 'one again', styles: [] });
    for (const [index, pieces] of versions.entries()) {
      assert.deepEqual(decodeChain(projectKey(ref), await store.versions.chain(ref, index + 1)), Buffer.concat(pieces));
    }
  });

  it('prunes whole chains beyond the count kept, and removes versions with their project', async () => {
    const store = newStore();
    const ref = { name: 'pruned', schema: 'public' };
    await store.create(ref, '<qgis/>');
    const recorder = new VersionRecorder(store, { versions: 5, days: 90 });
    for (let round = 0; round < 40; round++) {
      const pieces = [Buffer.from(`<qgis round="${round}"/>`), ...layers(5)];
      await recorder.record(ref, { pieces, identity: String(round), summary: String(round), styles: [] });
    }
    const kept = await store.versions.list(ref, undefined, 100);
    assert.ok(kept.length >= 5 && kept.length <= 10, `${kept.length} kept`);
    assert.equal(kept[0]?.id, 40);
    const oldest = kept.at(-1)?.id ?? 0;
    assert.match(
      decodeChain(projectKey(ref), await store.versions.chain(ref, oldest)).toString(),
      new RegExp(`round="${oldest - 1}"`),
    );
    assert.equal(await store.remove(ref), true);
    assert.deepEqual(await store.versions.list(ref, undefined, 100), []);
  });
  it('prunes whole chains older than the days kept, keeping the newest however old', async () => {
    const store = newStore();
    const ref = { name: 'aged', schema: 'public' };
    await store.create(ref, '<qgis/>');
    const day = 24 * 3600 * 1000;
    // Versions written 120 down to 100 days ago, as a process that kept them then would have.
    for (let round = 0; round < 21; round++) {
      await store.versions.append(ref, {
        time: new Date(Date.now() - (120 - round) * day).toISOString(),
        who: 'test',
        route: '',
        summary: `old ${round}`,
        identity: `old${round}`,
        keyframe: true,
        payload: await encodeKeyframe([Buffer.from(`<qgis old="${round}"/>`)]),
        styles: undefined,
        layers: undefined,
      });
    }
    // Nothing newer than 90 days: the newest stays, so that the project keeps a version.
    assert.equal(await store.versions.prune(ref, { versions: 1000, since: new Date(Date.now() - 90 * day) }), 20);
    assert.deepEqual(
      (await store.versions.list(ref, undefined, 100)).map((version) => version.summary),
      ['old 20'],
    );
    // A recorder keeping 90 days drops it with its first keyframe, and keeps every recent version.
    const recorder = new VersionRecorder(store, { versions: 1000, days: 90 });
    for (let round = 0; round < 3; round++) {
      const pieces = [Buffer.from(`<qgis new="${round}"/>`), ...layers(5)];
      await recorder.record(ref, { pieces, identity: `new${round}`, summary: `new ${round}`, styles: [] });
    }
    assert.deepEqual(
      (await store.versions.list(ref, undefined, 100)).map((version) => version.summary),
      ['new 2', 'new 1', 'new 0'],
    );
    assert.equal(
      decodeChain(projectKey(ref), await store.versions.chain(ref, 23)).toString(),
      Buffer.concat([Buffer.from('<qgis new="1"/>'), ...layers(5)]).toString(),
    );
  });

  it('keeps the layers each write listed through the chain, until a write lists none', async () => {
    const store = newStore();
    const ref = { name: 'listed', schema: 'public' };
    await store.create(ref, '<qgis/>');
    const recorder = new VersionRecorder(store, { versions: 1000, days: 90 });
    const entry = (name: string, round: number): LayerEntry => ({
      id: `${name}_id`,
      name,
      type: 'vector',
      provider: 'ogr',
      datasource: `/data/${name}.gpkg|round=${round}`,
      authid: 'EPSG:4326',
      // An extent QGIS left empty reads as NaN, which JSON cannot hold.
      extent: round % 2 ? [0, 0, round, round] : [Number.NaN, 0, Number.POSITIVE_INFINITY, round],
      currentStyle: 'default',
      styles: ['default'],
      identifiable: true,
    });
    let listed = Array.from({ length: 20 }, (_, index) => entry(`l${index}`, 0));
    const expected = new Map<number, LayerEntry[] | undefined>();
    for (let round = 1; round <= 12; round++) {
      listed = [...listed];
      if (round % 4 === 0) listed.splice(round, 1);
      else if (round % 4 === 1) listed.push(entry(`added${round}`, round));
      else listed[round] = entry(`l${round}`, round);
      // Round 6 lists no layers: its version keeps none, and the next keeps every layer again.
      const told = round === 6 ? undefined : listed;
      const pieces = [Buffer.from(`<qgis round="${round}"/>`), ...layers(5)];
      await recorder.record(ref, { pieces, identity: `r${round}`, summary: String(round), styles: [], layers: told });
      expected.set(round, told);
    }
    const byName = (list: readonly LayerEntry[] | undefined) =>
      list && new Map(list.map((layer) => [layer.name, layer]));
    for (const [id, told] of expected) {
      const chain = await store.versions.chain(ref, id);
      assert.equal(chain[0]?.id, 1, 'one chain');
      assert.deepEqual(byName(decodeChainLayers(projectKey(ref), chain)), byName(told), `layers of version ${id}`);
    }
  });

  it('reads a history file made before versions kept layers, and keeps them from then on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'steward-versions-'));
    dirs.push(dir);
    const old = new Database(join(dir, HISTORY_FILE));
    old.exec(`CREATE TABLE versions (
      project TEXT NOT NULL, id INTEGER NOT NULL, time TEXT NOT NULL, who TEXT NOT NULL, route TEXT NOT NULL,
      summary TEXT NOT NULL, identity TEXT NOT NULL, keyframe INTEGER NOT NULL, payload BLOB NOT NULL, styles BLOB,
      PRIMARY KEY (project, id))`);
    const content = Buffer.from('<qgis old="1"/>');
    old
      .prepare('INSERT INTO versions VALUES (?, 1, ?, ?, ?, ?, ?, 1, ?, NULL)')
      .run('old', new Date().toISOString(), 'test', '', 'old', 'o1', await encodeKeyframe([content]));
    old.close();
    const store = new FilesystemStore(dir);
    const ref = { name: 'old', schema: 'public' };
    const chain = await store.versions.chain(ref, 1);
    assert.deepEqual(decodeChain(projectKey(ref), chain), content);
    assert.equal(decodeChainLayers(projectKey(ref), chain), undefined);
    await store.create(ref, '<qgis/>');
    const recorder = new VersionRecorder(store, { versions: 1000, days: 90 });
    await recorder.record(ref, { pieces: layers(2), identity: 'n1', summary: 'new', styles: [], layers: [] });
    assert.deepEqual(decodeChainLayers(projectKey(ref), await store.versions.chain(ref, 2)), []);
  });

  it('keeps the versions it recorded as their writes knew them, by id and identity, until forgotten', async () => {
    const store = newStore();
    const ref = { name: 'kept', schema: 'public' };
    await store.create(ref, '<qgis/>');
    const recorder = new VersionRecorder(store, { versions: 1000, days: 90 });
    const [first, second] = [layers(2), layers(3)];
    await recorder.record(ref, { pieces: first, identity: 'a', summary: 'first', styles: [], layers: [] });
    await recorder.record(ref, { pieces: second, identity: 'b', summary: 'layers untold', styles: [] });
    const [two, one] = (await store.versions.list(ref, undefined, 2)).map((version) => version.id);
    assert.ok(one !== undefined && two !== undefined);
    assert.equal(await store.versions.identityOf(ref, one), 'a');
    assert.equal(recorder.kept(ref, one, 'a')?.pieces, first);
    assert.deepEqual(recorder.kept(ref, one, 'a')?.layers, []);
    assert.equal(recorder.kept(ref, two, 'b')?.pieces, second);
    assert.equal(recorder.kept(ref, two, 'b')?.layers, undefined);
    assert.equal(recorder.kept(ref, one, 'written elsewhere'), undefined);
    recorder.forget(ref);
    assert.equal(recorder.kept(ref, one, 'a'), undefined);
  });
});
