/** The choice of what the map draws under the project's layers (basemap.ts), kept in the browser. */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { type Basemap, basemapOf, type OfferedBasemap, offeredKey, storeBasemapKey, storedBasemapKey } from './basemap';

/** The basemap chosen among none, the graticule and those `offered`, and its picker. */
export function useBasemap(offered: readonly OfferedBasemap[]): { basemap: Basemap; picker: JSX.Element } {
  const [key, setKey] = useState(storedBasemapKey);
  const basemap = basemapOf(key, offered);
  const choose = (next: string): void => {
    storeBasemapKey(next);
    setKey(next);
  };
  const attribution = basemap.kind === 'offered' ? basemap.offered.attribution : undefined;
  const picker = (
    <>
      <label class="check">
        Basemap
        <select
          value={basemap.kind === 'offered' ? offeredKey(basemap.offered) : basemap.kind}
          onChange={(event) => choose(event.currentTarget.value)}
        >
          <option value="none">none</option>
          <option value="graticule">graticule (meridians and parallels)</option>
          {offered.map((each) => (
            <option key={each.name} value={offeredKey(each)}>
              {each.name}
            </option>
          ))}
        </select>
      </label>
      {attribution && <small class="muted">{attribution}</small>}
    </>
  );
  return { basemap, picker };
}
