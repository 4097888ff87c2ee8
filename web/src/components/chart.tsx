/**
 * A chart drawn by uPlot (a small canvas charting library): lines over time, or bars over bins.
 * The canvas is hidden from assistive technology; the caller gives the same facts in words.
 */
import 'uplot/dist/uPlot.min.css';

import type { JSX } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface ChartSeries {
  label: string;
  colour: string;
}

export interface ChartProps {
  /** The figure's caption. */
  title: string;
  /** x values first, then one array per series, all of the same length. */
  data: number[][];
  series: ChartSeries[];
  /** `time`: x values are seconds since the epoch, drawn as lines; `bins`: bars. */
  kind: 'time' | 'bins';
  children?: JSX.Element | JSX.Element[] | string;
}

const HEIGHT = 220;

function options(props: ChartProps, width: number): uPlot.Options {
  const bars = props.kind === 'bins' ? uPlot.paths.bars?.({ size: [0.9, 40] }) : undefined;
  return {
    width,
    height: HEIGHT,
    scales: { x: { time: props.kind === 'time' } },
    legend: { show: props.series.length > 1 },
    series: [
      { label: props.kind === 'time' ? 'Time' : 'Value' },
      ...props.series.map(({ label, colour }) => ({
        label,
        stroke: colour,
        width: 2,
        ...(bars ? { paths: bars, fill: colour, points: { show: false } } : {}),
      })),
    ],
  };
}

export function Chart(props: ChartProps): JSX.Element {
  const target = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | undefined>(undefined);
  const shape = `${props.kind}:${props.series.map(({ label }) => label).join('|')}`;
  useEffect(() => {
    const element = target.current;
    if (!element) return;
    const chart = new uPlot(options(props, element.clientWidth || 600), props.data as uPlot.AlignedData, element);
    plot.current = chart;
    return () => {
      chart.destroy();
      plot.current = undefined;
    };
    // Made again only when its series change; new data goes through setData below.
  }, [shape]);
  useEffect(() => {
    plot.current?.setData(props.data as uPlot.AlignedData);
  }, [props.data]);
  return (
    <figure class="chart" data-points={props.data[0]?.length ?? 0}>
      <figcaption>{props.title}</figcaption>
      <div ref={target} aria-hidden="true" />
      {props.children}
    </figure>
  );
}
