import type { JSX } from 'preact';

/**
 * A labelled, required number input, kept as text while typed: whole numbers between `min` and
 * `max` unless `step` is `any`.
 */
export function NumberField(props: {
  label: string;
  value: string;
  min?: number;
  max?: number;
  step?: 'any';
  onInput: (value: string) => void;
}): JSX.Element {
  return (
    <label>
      {props.label}
      <input
        type="number"
        min={props.min}
        max={props.max}
        step={props.step}
        required
        value={props.value}
        onInput={(event) => props.onInput(event.currentTarget.value)}
      />
    </label>
  );
}
