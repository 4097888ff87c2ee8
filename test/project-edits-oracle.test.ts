import assert from 'node:assert/strict';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { unzipSync, zipSync } from 'fflate';

import { QgisServerProcess } from '../src/runtime/qgis-server.js';
import { type Fixtures, makeFixtures } from './support/fixtures.js';
import { after, before, describe, it } from './support/node-test.js';
import { ows } from './support/qgis.js';
import { type QgisRuntime, runPyqgis, SYSTEM_QGIS, TEST_QGIS } from './support/qgis-runtime.js';
import { type Stack, startStack } from './support/stack.js';

/**
 * The oracle of project edits: each edit is made once through Steward's API and once through
 * QgsProject (test/support/pyqgis/edit_project.py) on a copy of the same QGIS-made project, and
 * QGIS reads both back (project_summary.py). The summaries must be equal, apart from:
 * - what QGIS rewrites on every save and the summary never reads (timestamps, saving user and
 *   version, attribute and element order QGIS does not care about, relative or absolute paths:
 *   sources are compared as QGIS resolves them);
 * - layer ids, replaced by names: Steward and QGIS give a new layer different random ids;
 * - the symbol colours of a layer added by the edit: QGIS picks a random colour, Steward draws
 *   new layers with the project's default style;
 * - whether a layer whose current style the edit replaces keeps its labels: QGIS 3.22 turns them off
 *   when it loads a style of the Symbology and Rendering categories only, which says nothing of
 *   labels; Steward keeps them on purpose (docs/project-edits.md).
 */

const RUNTIMES: QgisRuntime[] = [TEST_QGIS];
const EXTRA_ENTRY = 'attachments/readme.txt';

const POLYGON_STYLE = {
  type: 'vector',
  name: 'teal',
  rendering: {},
  symbology: { type: 'single_symbol', symbol: 'fill', properties: { color: '#00BBBB' } },
};
const LINE_STYLE = {
  type: 'vector',
  name: 'blue',
  rendering: {},
  symbology: { type: 'single_symbol', symbol: 'line', properties: { line_color: '#0000FF', line_width: 3 } },
};

const METADATA = {
  title: 'Rivers & lakes',
  abstract: 'Water <bodies>\nof the region',
  author: 'Grace',
  wms_title: 'Hydrography',
  wms_abstract: 'Rivers and lakes, daily',
};

/** Every service setting Steward writes, on the corpus's layers (vector, raster) and a group. */
const SERVICES = {
  title: 'Hydrography',
  abstract: 'Rivers & lakes',
  keywords: ['water', 'rivers'],
  online_resource: 'https://maps.example.org/',
  fees: 'none',
  access_constraints: 'open',
  advertised: true,
  contact: { person: 'Ada', organization: 'Survey', position: 'pointOfContact', mail: 'a@b.org', phone: '+33 1' },
  wms: {
    crs: ['EPSG:4326', 'EPSG:3857', 'EPSG:2154'],
    extent: [0.5, 43.5, 3.5, 46.5],
    max_width: 4000,
    max_height: 3000,
    image_quality: 85,
    feature_info: { geometry: true, segmentize: true, precision: 4, use_form_settings: true },
    use_layer_ids: false,
  },
  wfs: {
    layers: ['polygons', 'points'],
    precision: { polygons: 3 },
    insert: ['points'],
    update: ['points'],
    delete: ['polygons'],
  },
  wcs: { layers: ['rgb'] },
  wmts: {
    project: true,
    groups: ['vectors'],
    layers: ['lines', 'rgb'],
    formats: { rgb: ['image/jpeg'], '': ['image/png'] },
    grids: [
      {
        crs: 'EPSG:3857',
        top: 20037508.342789248,
        left: -20037508.342789248,
        scale_denominator: 559082264.0287179,
        last_level: 12,
      },
      { crs: 'EPSG:2154', top: 7230727.377, left: -357823.236, scale_denominator: 8000000, last_level: 3 },
    ],
  },
};

/** The corpus regrouped: a new group, layers moved between groups, a mutually exclusive one, hidden layers. */
const TREE = {
  children: [
    {
      type: 'group',
      name: 'base',
      title: 'Base maps',
      short_name: 'base_maps',
      visible: true,
      expanded: false,
      mutually_exclusive: false,
      children: [{ type: 'layer', name: 'rgb', visible: true }],
    },
    {
      type: 'group',
      name: 'vectors',
      visible: true,
      expanded: true,
      mutually_exclusive: true,
      children: [
        { type: 'layer', name: 'polygons', visible: true },
        {
          type: 'group',
          name: 'nested',
          title: 'Lines and points',
          visible: true,
          expanded: true,
          mutually_exclusive: false,
          children: [
            { type: 'layer', name: 'points', visible: false },
            { type: 'layer', name: 'lines', visible: true },
          ],
        },
      ],
    },
    { type: 'layer', name: 'virtual', visible: false },
    { type: 'group', name: 'shared', embedded: true, visible: true },
  ],
};
const ORDERED_TREE = { ...TREE, order: ['virtual', 'lines', 'rgb', 'points', 'polygons'] };

interface Summary {
  layers: Record<string, { styles: { styles: Record<string, unknown> }; labels?: unknown; elevation?: unknown }>;
  messages: string[];
  [key: string]: unknown;
}

/** One edit: what Steward is asked, and the same edit in QgsProject (edit_project.py arguments). */
interface Edit {
  name: string;
  steward(stack: Stack, project: string): Promise<void>;
  qgis(stack: Stack, project: string): string[][];
  /** Layers the edit adds, whose default symbol colours differ by design. */
  added?: string[];
  /** The layer the edit removes. */
  removes?: string;
  /** Layers whose current style the edit replaces, whose labels Steward keeps. */
  restyles?: string[];
}

/** A kept-alive connection the API closed as idle while PyQGIS ran (a minute or more under load). */
function staleConnection(error: unknown): boolean {
  return error instanceof TypeError && (error.cause as { code?: string } | undefined)?.code === 'ECONNRESET';
}

async function ok(stack: Stack, method: string, path: string, body?: unknown): Promise<void> {
  let response;
  try {
    response = await stack.call(method, path, body);
  } catch (error) {
    // The reset request never reached the API, which had closed the connection: it is sent again.
    if (!staleConnection(error)) throw error;
    response = await stack.call(method, path, body);
  }
  assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${JSON.stringify(response.body)}`);
}

/** The edits, reading the fixtures (made once the tests start) when run. */
function edits(fixtures: () => Fixtures): Edit[] {
  const styleFile = (stack: Stack, project: string, style: string): string =>
    join(stack.projectsDir, project, `${style}.qml`);
  /** Where the datasource repair finds the polygons: a copy of the fixtures' GeoPackage. */
  const moved = (): string => join(fixtures().dir, 'moved.gpkg');
  const removal = (layer: string): Edit => ({
    name: `remove_${layer}`,
    steward: (stack, project) => ok(stack, 'DELETE', `/api/projects/${project}/layers/${layer}`),
    qgis: () => [['remove-layer', layer]],
    removes: layer,
  });
  return [
    {
      name: 'add_vector',
      steward: (stack, project) =>
        ok(stack, 'POST', `/api/projects/${project}/layers`, {
          type: 'vector',
          name: 'added',
          datasource: `${fixtures().geopackage}|layername=points`,
        }),
      qgis: () => [['add-layer', 'added', 'vector', `${fixtures().geopackage}|layername=points`]],
      added: ['added'],
    },
    {
      name: 'add_raster',
      steward: (stack, project) =>
        ok(stack, 'POST', `/api/projects/${project}/layers`, {
          type: 'raster',
          name: 'image',
          datasource: fixtures().rgbTiff,
        }),
      qgis: () => [['add-layer', 'image', 'raster', fixtures().rgbTiff]],
      added: ['image'],
    },
    removal('polygons'),
    removal('points'),
    removal('lines'),
    removal('rgb'),
    {
      name: 'put_style',
      async steward(stack, project) {
        await ok(stack, 'POST', `/api/projects/${project}/styles`, POLYGON_STYLE);
        await ok(stack, 'POST', `/api/projects/${project}/layers/polygons/style`, { name: 'teal' });
      },
      qgis: (stack, project) => [['put-style', 'polygons', 'teal', styleFile(stack, project, 'teal'), 'other']],
    },
    {
      name: 'put_current_style',
      async steward(stack, project) {
        await ok(stack, 'POST', `/api/projects/${project}/styles`, LINE_STYLE);
        await ok(stack, 'POST', `/api/projects/${project}/layers/lines/style`, { name: 'blue', current: true });
      },
      qgis: (stack, project) => [['put-style', 'lines', 'blue', styleFile(stack, project, 'blue'), 'current']],
      restyles: ['lines'],
    },
    {
      name: 'set_metadata',
      steward: (stack, project) => ok(stack, 'PATCH', `/api/projects/${project}`, METADATA),
      qgis: () => [
        ['set-metadata', METADATA.title, METADATA.abstract, METADATA.author, METADATA.wms_title, METADATA.wms_abstract],
      ],
    },
    {
      name: 'set_tree',
      steward: (stack, project) => ok(stack, 'PUT', `/api/projects/${project}/tree`, TREE),
      qgis: () => [['set-tree', JSON.stringify(TREE)]],
    },
    {
      name: 'set_tree_order',
      steward: (stack, project) => ok(stack, 'PUT', `/api/projects/${project}/tree`, ORDERED_TREE),
      qgis: () => [['set-tree', JSON.stringify(ORDERED_TREE)]],
    },
    {
      name: 'set_datasource',
      steward(stack, project) {
        copyFileSync(fixtures().geopackage, moved());
        return ok(stack, 'PATCH', `/api/projects/${project}/layers/polygons`, {
          datasource: `${moved()}|layername=polygons`,
        });
      },
      qgis: () => [['set-datasource', 'polygons', `${moved()}|layername=polygons`]],
    },
    {
      name: 'set_services',
      steward: (stack, project) => ok(stack, 'PATCH', `/api/projects/${project}/services`, SERVICES),
      qgis: () => [['set-services', JSON.stringify(SERVICES)]],
    },
    {
      name: 'make_current',
      async steward(stack, project) {
        await ok(stack, 'POST', `/api/projects/${project}/styles`, POLYGON_STYLE);
        await ok(stack, 'POST', `/api/projects/${project}/layers/polygons/style`, { name: 'teal' });
        await ok(stack, 'POST', `/api/projects/${project}/layers/polygons/style`, { name: 'teal', current: true });
      },
      qgis: (stack, project) => [
        ['put-style', 'polygons', 'teal', styleFile(stack, project, 'teal'), 'other'],
        ['make-current', 'polygons', 'teal'],
      ],
    },
  ];
}

/** The summary without what the test names as ignored: colours of added layers, labels of restyled ones. */
function comparable(summary: Summary, edit: Edit): Summary {
  for (const name of edit.restyles ?? []) {
    const layer = summary.layers[name];
    if (layer) layer.labels = 'ignored';
  }
  for (const name of edit.added ?? []) {
    const styles = summary.layers[name]?.styles.styles ?? {};
    for (const style of Object.keys(styles)) {
      const renderer = styles[style];
      if (typeof renderer === 'object' && renderer !== null) styles[style] = { ...renderer, colors: 'ignored' };
    }
  }
  return summary;
}

function zipEntries(path: string): string[] {
  return Object.keys(unzipSync(readFileSync(path))).sort();
}

/**
 * QGIS Server log lines at warning level or above, or naming a project problem; QGIS 3.22 logs
 * its capabilities cache at warning level, which says nothing of the project.
 */
function warnings(log: readonly string[]): string[] {
  return log
    .filter((line) => /warning|critical|error|does not exist|broken|invalid/i.test(line))
    .filter((line) => !/capabilities document (not found in|in) cache/.test(line));
}

/** The .qgs text of a .qgz. */
function projectText(path: string): string {
  const entries = unzipSync(readFileSync(path));
  const name = Object.keys(entries).find((entry) => entry.endsWith('.qgs')) ?? '';
  return new TextDecoder().decode(entries[name]);
}

function occurrences(text: string, id: string): number {
  return text.split(id).length - 1;
}

for (const runtime of RUNTIMES) {
  describe(`project edits match QgsProject's (${runtime.name})`, () => {
    let data: Fixtures;
    let stack: Stack;
    let corpus: string;
    let oracle: string;
    const cases = new Map<string, { steward: string; qgis: string }>();

    before(async () => {
      data = makeFixtures();
      stack = await startStack();
      corpus = mkdtempSync(join(tmpdir(), 'steward-corpus-'));
      oracle = mkdtempSync(join(tmpdir(), 'steward-oracle-'));
      runPyqgis(runtime, 'make_corpus.py', corpus, data.geopackage, data.rgbTiff);
      // The corpus embeds a group of ../library/library.qgs: every copy has it beside.
      for (const root of [stack.projectsDir, oracle])
        cpSync(join(corpus, 'library'), join(root, 'library'), { recursive: true });
    });
    after(async () => {
      await stack.stop();
      for (const dir of [corpus, oracle, data.dir]) rmSync(dir, { recursive: true, force: true });
    });

    it('starts from a corpus QGIS reads without a complaint', () => {
      const summary = JSON.parse(
        runPyqgis(runtime, 'project_summary.py', join(corpus, 'corpus', 'corpus.qgz')),
      ) as Summary;
      assert.deepEqual(summary.messages, []);
      assert.deepEqual(Object.keys(summary.layers).sort(), [
        'library_points',
        'lines',
        'points',
        'polygons',
        'rgb',
        'virtual',
      ]);
      // QGIS 3.40 and later add the project's styles database (<random>_styles.db) to the .qgz.
      const written = zipEntries(join(corpus, 'corpus', 'corpus.qgz')).filter((name) => !name.endsWith('_styles.db'));
      assert.deepEqual(written, ['corpus.qgd', 'corpus.qgs']);
      if (runtime.version !== SYSTEM_QGIS.version) {
        // QGIS 3.26 and later keep elevation properties, which every edit must carry through.
        assert.deepEqual(summary.layers['points']?.elevation, { zOffset: 12.5, zScale: 2 });
        assert.equal(summary['terrainOffset'], 3);
      }
      // The report's body map is what the removal of polygons and points must edit.
      assert.deepEqual(
        (summary['reports'] as Array<{ sections: Array<{ body: { maps: Array<{ layers: string[] }> } }> }>).map(
          (report) => report.sections.map((section) => section.body.maps.map((map) => map.layers)),
        ),
        [[[['polygons', 'points']]]],
      );
    });

    for (const edit of edits(() => data)) {
      it(`${edit.name}: Steward's edit reads back as QgsProject's`, async () => {
        const name = edit.name;
        const steward = join(stack.projectsDir, name, `${name}.qgz`);
        const qgis = join(oracle, name, `${name}.qgz`);
        for (const file of [steward, qgis]) {
          mkdirSync(join(file, '..'), { recursive: true });
          cpSync(join(corpus, 'corpus', 'corpus.qgz'), file);
        }
        // A file QGIS does not know of, which Steward must carry through its writes as the .qgd.
        const entries = unzipSync(readFileSync(steward));
        entries[EXTRA_ENTRY] = new TextEncoder().encode('kept');
        writeFileSync(steward, zipSync(entries));
        await edit.steward(stack, name);
        for (const step of edit.qgis(stack, name)) runPyqgis(runtime, 'edit_project.py', qgis, qgis, ...step);
        cases.set(name, { steward, qgis });
        const read = (file: string): Summary =>
          comparable(JSON.parse(runPyqgis(runtime, 'project_summary.py', file)) as Summary, edit);
        const expected = read(qgis);
        assert.deepEqual(read(steward), expected);
        assert.deepEqual(expected.messages, [], 'QGIS itself leaves no dangling reference');
        if (edit.removes) {
          // What QGIS reads back hides references it cannot resolve: the texts must name the layer as often.
          const id =
            new RegExp(`<id>(${edit.removes}_[0-9a-f_]+)</id>`).exec(
              projectText(join(corpus, 'corpus', 'corpus.qgz')),
            )?.[1] ?? '';
          assert.ok(id);
          assert.equal(occurrences(projectText(steward), id), occurrences(projectText(qgis), id));
        }
      });
    }

    it('keeps the auxiliary database and any other file of the .qgz, and the auxiliary values', () => {
      const corpusEntries = unzipSync(readFileSync(join(corpus, 'corpus', 'corpus.qgz')));
      assert.equal(cases.size, edits(() => data).length);
      for (const { steward } of cases.values()) {
        const entries = unzipSync(readFileSync(steward));
        assert.deepEqual(Object.keys(entries).sort(), [EXTRA_ENTRY, ...Object.keys(corpusEntries)].sort(), steward);
        assert.deepEqual(entries['corpus.qgd'], corpusEntries['corpus.qgd'], steward);
        assert.equal(new TextDecoder().decode(entries[EXTRA_ENTRY]), 'kept');
      }
      const summary = JSON.parse(runPyqgis(runtime, 'project_summary.py', cases.get('remove_rgb')?.steward ?? '')) as {
        layers: Record<string, { auxiliary: string[] }>;
      };
      assert.deepEqual(summary.layers['points']?.auxiliary, [
        'auxiliary_storage__note=aux-points-0',
        'auxiliary_storage__note=aux-points-1',
        'auxiliary_storage__note=aux-points-2',
      ]);
    });

    it('leaves projects QGIS Server loads without a warning', async () => {
      assert.ok(cases.size > 0);
      const log: string[] = [];
      const server = await QgisServerProcess.start({ command: runtime.mapserver, onLog: (line) => log.push(line) });
      try {
        for (const { steward, qgis } of cases.values()) {
          for (const file of [qgis, steward]) {
            log.length = 0;
            const response = await ows(server, file, { SERVICE: 'WMS', VERSION: '1.3.0', REQUEST: 'GetCapabilities' });
            assert.equal(response.status, 200, file);
            await response.text();
            assert.deepEqual(warnings(log), [], file);
          }
        }
      } finally {
        await server.stop();
      }
    });
  });
}
