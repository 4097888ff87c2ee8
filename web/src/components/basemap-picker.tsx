/** The choice of what the map draws under the project's layers (basemap.ts), kept in the browser. */
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';

import { type Basemap, storeBasemap, storedBasemap } from './basemap';

export function useBasemap(): { basemap: Basemap; picker: JSX.Element } {
  const [basemap, setBasemap] = useState<Basemap>(storedBasemap);
  const choose = (next: Basemap): void => {
    storeBasemap(next);
    setBasemap(next);
  };
  const picker = (
    <label class="check">
      Basemap
      <select value={basemap} onChange={(event) => choose(event.currentTarget.value as Basemap)}>
        <option value="none">none</option>
        <option value="graticule">graticule (meridians and parallels)</option>
      </select>
    </label>
  );
  return { basemap, picker };
}
