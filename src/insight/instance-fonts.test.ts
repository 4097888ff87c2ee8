import assert from 'node:assert/strict';

import { describe, it } from '../../test/support/node-test.js';
import { type InstanceAbout } from '../monitor/protocol.js';
import { type InstanceDirectory } from '../monitor/registry.js';
import { fontAbsences, InstanceFonts } from './instance-fonts.js';

/** A directory of instances that answer `about` with the given fonts, or fail for undefined. */
function directory(fonts: Record<string, string[] | undefined>): InstanceDirectory {
  return {
    list: () =>
      Object.keys(fonts).map((id) => ({ id, ip: '127.0.0.1', binded: 0, registered_at: new Date(0).toISOString() })),
    request: async (id) => {
      const families = fonts[id];
      if (!families) throw new Error(`instance ${id} is gone`);
      return { fonts: families } as InstanceAbout;
    },
  };
}

const local = async () => new Set(['dejavu sans', 'local only']);

describe('fonts of the instances', () => {
  it('reports a font some instances lack, naming them, and whether any has it', async () => {
    const fonts = new InstanceFonts(directory({ a: ['DejaVu Sans'], b: ['DejaVu Sans', 'DejaVu Serif'] }), local);
    const absences = fontAbsences(await fonts.hosts(), ['dejavu sans', 'DejaVu Serif', 'Local Only']);
    assert.deepEqual(
      absences.map(({ family, nowhere, instances }) => [family, nowhere, instances]),
      [
        ['DejaVu Serif', false, ['a']],
        ['Local Only', true, ['a', 'b']],
      ],
    );
    assert.match(absences[0]?.message ?? '', /^font "DejaVu Serif" is not installed on QGIS Server instance a,/);
    assert.match(absences[1]?.message ?? '', /^font "Local Only" is installed on no QGIS Server instance \(a, b\)/);
  });

  it("skips instances that do not answer; without any, looks at this machine's fonts and says why", async () => {
    const oneAnswers = new InstanceFonts(directory({ a: undefined, b: ['Serif'] }), local);
    assert.deepEqual(fontAbsences(await oneAnswers.hosts(), ['Serif']), []);
    const cases: Array<[InstanceDirectory | undefined, RegExp]> = [
      [undefined, /monitoring is off/],
      [directory({}), /no QGIS Server instance is connected/],
      [directory({ a: undefined }), /no QGIS Server instance told its fonts/],
    ];
    for (const [instances, why] of cases) {
      const hosts = await new InstanceFonts(instances, local).hosts();
      assert.deepEqual(fontAbsences(hosts, ['Local Only']), []);
      const [absence] = fontAbsences(hosts, ['Elsewhere']);
      assert.equal(absence?.nowhere, true);
      assert.match(absence?.message ?? '', /^font "Elsewhere" is not installed on Steward's machine/);
      assert.match(absence?.message ?? '', why);
    }
    const failing = new InstanceFonts(undefined, () => Promise.reject(new Error('fc-list: not found')));
    const [unknown] = fontAbsences(await failing.hosts(), ['Any']);
    assert.match(
      unknown?.message ?? '',
      /^font "Any" could not be looked for: monitoring is off, .*fc-list: not found/,
    );
  });
});
