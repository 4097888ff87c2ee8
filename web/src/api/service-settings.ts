/** The service settings as the console edits them, and the PATCH body of what changed. */
import type { Answer, Body } from './client';

export type ServicesAnswer = Answer<'/api/projects/{project}/services'>;
export type Settings = Omit<ServicesAnswer, 'endpoints' | 'ogcapi_features'>;
export type ServicesChange = NonNullable<Body<'/api/projects/{project}/services', 'patch'>>;

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The fields that differ from what was read: a service's or the contact's one by one. */
export function servicesChange(start: Settings, now: Settings): ServicesChange {
  const change: Record<string, unknown> = {};
  for (const key of Object.keys(now) as (keyof Settings)[]) {
    const [before, after] = [start[key], now[key]];
    if (same(before, after)) continue;
    if (typeof after !== 'object' || after === null || Array.isArray(after)) {
      change[key] = after;
      continue;
    }
    const fields: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(after)) {
      if (!same((before as Record<string, unknown>)[field], value)) fields[field] = value;
    }
    change[key] = fields;
  }
  return change;
}

/** Words separated by commas, as a list. */
export function words(text: string): string[] {
  return text
    .split(',')
    .map((word) => word.trim())
    .filter(Boolean);
}

/** `list` with `name` in or out of it. */
export function toggled(list: string[], name: string, on: boolean): string[] {
  return on ? [...list.filter((item) => item !== name), name] : list.filter((item) => item !== name);
}
