import type { JSX } from 'preact';

/** A labelled, required whole-number input between `min` and `max`, kept as text while typed. */
export function NumberField(props: {
  label: string;
  value: string;
  min: number;
  max: number;
  onInput: (value: string) => void;
}): JSX.Element {
  return (
    <label>
      {props.label}
      <input
        type="number"
        min={props.min}
        max={props.max}
        required
        value={props.value}
        onInput={(event) => props.onInput(event.currentTarget.value)}
      />
    </label>
  );
}
