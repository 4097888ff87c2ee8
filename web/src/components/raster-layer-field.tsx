/** The choice of one of a project's raster layers, as the processing forms ask for it. */
import type { JSX } from 'preact';

export function RasterLayerField(props: {
  rasters: string[];
  value: string;
  onChange: (layer: string) => void;
}): JSX.Element {
  return (
    <label>
      Raster layer
      <select value={props.value} onChange={(event) => props.onChange(event.currentTarget.value)}>
        {props.rasters.map((name) => (
          <option key={name}>{name}</option>
        ))}
      </select>
    </label>
  );
}
