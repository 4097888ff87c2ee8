import assert from 'node:assert/strict';

import { describe, it } from '../test/support/node-test.js';
import { basemapOrigins, readBasemaps } from './basemap-settings.js';

const read = (value: string | undefined) =>
  readBasemaps({ STEWARD_CONSOLE_BASEMAPS: value }, (message) => new Error(message));

describe('console basemaps (STEWARD_CONSOLE_BASEMAPS)', () => {
  it('offers none when unset', () => {
    assert.deepEqual(read(undefined), []);
    assert.deepEqual(read(' '), []);
  });

  it('reads xyz and wms basemaps, and their origins for the console policy', () => {
    const basemaps = read(
      JSON.stringify([
        { name: 'Streets', type: 'xyz', url: 'https://tiles.example.org/{z}/{x}/{y}.png', attribution: '© Example' },
        { name: 'Ortho', type: 'wms', url: 'http://wms.example.org:8080/ows?MAP=ortho', layers: 'ortho,roads' },
        { name: 'Streets 2', type: 'xyz', url: 'https://tiles.example.org/b/{z}/{x}/{y}.png' },
      ]),
    );
    assert.deepEqual(basemaps, [
      { name: 'Streets', type: 'xyz', url: 'https://tiles.example.org/{z}/{x}/{y}.png', attribution: '© Example' },
      { name: 'Ortho', type: 'wms', url: 'http://wms.example.org:8080/ows?MAP=ortho', layers: 'ortho,roads' },
      { name: 'Streets 2', type: 'xyz', url: 'https://tiles.example.org/b/{z}/{x}/{y}.png' },
    ]);
    assert.deepEqual(basemapOrigins(basemaps), ['https://tiles.example.org', 'http://wms.example.org:8080']);
  });

  it('refuses what the console could not draw, naming the basemap and why', () => {
    const refusals: Array<[unknown, RegExp]> = [
      ['not json', /not JSON/],
      [{ name: 'a' }, /JSON array/],
      [[{ type: 'xyz', url: 'https://t.example/{z}/{x}/{y}.png' }], /basemap 1 needs "name"/],
      [[{ name: 'a', type: 'tms', url: 'https://t.example/{z}/{x}/{y}.png' }], /"a" needs "type"/],
      [[{ name: 'a', type: 'xyz', url: 'javascript:alert(1)//{z}{x}{y}' }], /"a" needs an http\(s\) "url"/],
      [[{ name: 'a', type: 'xyz', url: 'https://t.example/tiles.png' }], /needs \{z\}, \{x\} and \{y\}/],
      [[{ name: 'a', type: 'wms', url: 'https://wms.example/ows' }], /needs "layers"/],
      [
        [
          { name: 'a', type: 'wms', url: 'https://wms.example/ows', layers: 'x' },
          { name: 'a', type: 'wms', url: 'https://wms.example/ows', layers: 'y' },
        ],
        /two basemaps are named "a"/,
      ],
    ];
    for (const [value, reason] of refusals) {
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      assert.throws(
        () => read(text),
        (error: Error) => error.message.startsWith('STEWARD_CONSOLE_BASEMAPS: ') && reason.test(error.message),
      );
    }
  });
});
