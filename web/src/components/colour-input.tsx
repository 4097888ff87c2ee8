/**
 * A colour of a style with its opacity: a colour picker (which has no alpha) beside the opacity in
 * percent, so that a half-transparent fill or class keeps its alpha from load to save.
 */
import type { JSX } from 'preact';

import { colourParts, colourText } from '../style-draft';

interface Props {
  /** The picker's accessible name ("Colour of The hill"). */
  name: string;
  /** What the opacity is of, in its accessible name ("Opacity of The hill"). */
  of: string;
  colour: string;
  onChange: (colour: string) => void;
}

const percentOf = (alpha: number): number => Math.round((alpha / 255) * 100);
const alphaOf = (percent: number): number => Math.round((Math.min(100, Math.max(0, percent)) / 100) * 255);

export function ColourInput(props: Props): JSX.Element {
  const parts = colourParts(props.colour);
  return (
    <span class="colour-input">
      <input
        type="color"
        aria-label={props.name}
        value={parts.hex}
        onInput={(event) => props.onChange(colourText({ ...parts, hex: event.currentTarget.value }))}
      />
      <input
        type="number"
        min="0"
        max="100"
        step="1"
        aria-label={`Opacity of ${props.of} (%)`}
        value={percentOf(parts.alpha)}
        onInput={(event) => props.onChange(colourText({ ...parts, alpha: alphaOf(Number(event.currentTarget.value)) }))}
      />
      %
    </span>
  );
}
