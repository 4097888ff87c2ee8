import type { JSX } from 'preact';

/** A labelled drop-down list of `options` (value, words), telling `onChange` the value picked. */
export function Choice<V extends string>(props: {
  label: string;
  value: V;
  options: ReadonlyArray<readonly [V, string]>;
  onChange: (value: V) => void;
  class?: string;
}): JSX.Element {
  return (
    <label class={props.class}>
      {props.label}
      <select value={props.value} onChange={(event) => props.onChange(event.currentTarget.value as V)}>
        {props.options.map(([value, words]) => (
          <option key={value} value={value}>
            {words}
          </option>
        ))}
      </select>
    </label>
  );
}
