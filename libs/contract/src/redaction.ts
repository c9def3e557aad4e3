import { capabilities } from './catalog.ts';
import type { Capability } from './capability.ts';
import { opList } from './ops.ts';
import { hideSecrets, secretPaths } from './secret.ts';
import type { z } from 'zod';

/**
 * One structural step keeps secrets out of everything that is kept or sent again: the members a
 * schema marks `secret` (secret.ts) are found from the declarations, never from the text, and masked in stored
 * answers and replays, left out of events and facts, and blanked in log lines (platform logger). Adding a secret
 * is marking its member in the contract; nothing else changes.
 */

/** Secret paths of each answer name's value (capabilities' answers, and the platform ops' replies that name one). */
let byAnswer: Map<string, string[][]> | undefined;
/** Ops whose reply is flat (no `answers`/`value`: POST /keys), by `METHOD path`. */
let flatByRoute: Map<string, string[][]> | undefined;
function tables() {
  if (byAnswer && flatByRoute) return { byAnswer, flatByRoute };
  byAnswer = new Map();
  flatByRoute = new Map();
  const add = (name: string, paths: string[][]) => {
    if (paths.length) byAnswer!.set(name, [...(byAnswer!.get(name) ?? []), ...paths]);
  };
  for (const c of capabilities) add(c.answer, secretPaths(c.value));
  for (const o of opList) {
    const members = 'options' in o.reply ? ((o.reply as unknown as z.ZodUnion).options as z.ZodType[]) : [o.reply];
    for (const m of members) {
      const shape = (m as z.ZodObject).shape as Record<string, z.ZodType> | undefined;
      const answers = shape?.answers?.def as { type?: string; values?: unknown[] } | undefined;
      if (shape?.value && answers?.type === 'literal') add(String(answers.values![0]), secretPaths(shape.value));
      else if (o.route && shape && !shape.value) {
        const p = secretPaths(m);
        if (p.length) flatByRoute.set(`${o.route.method} ${o.route.path}`, p);
      }
    }
  }
  return { byAnswer, flatByRoute };
}

/** The names secret members go by anywhere in the contract (the logger blanks them at any depth). */
let names: string[] | undefined;
export function secretMemberNames(): string[] {
  if (names) return names;
  const { byAnswer: a, flatByRoute: f } = tables();
  names = [...new Set([...a.values(), ...f.values()].flat().map((p) => p.at(-1)!))];
  return names;
}

/**
 * Mask the secrets of every answer inside `v` (an answer, or an intent's or handoff's view holding one), at any
 * depth.
 */
function masked(v: unknown, a: Map<string, string[][]>): unknown {
  if (Array.isArray(v)) return v.map((x) => masked(x, a));
  if (!v || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const k in o) {
    const x = o[k];
    if (x && typeof x === 'object') {
      const m = masked(x, a);
      if (m !== x) (out ??= { ...o })[k] = m;
    }
  }
  const paths = typeof o.answers === 'string' ? a.get(o.answers) : undefined;
  if (paths) {
    out ??= { ...o };
    out.value = hideSecrets(out.value, paths, 'mask');
    if ('evidence' in out) out.evidence = hideSecrets(out.evidence, paths, 'mask');
  }
  return out ?? v;
}

/**
 * A stored or replayed copy of an answer's JSON (a durable execution's, an intent's, a handoff's, an Idempotency-Key
 * replay's): each secret-marked member keeps its place and shows `SECRET_NOT_REPLAYED`. `route` names the route of a
 * flat reply (POST /keys), whose members are the answer's own. Text holding none of the secret members' names is
 * returned as it is, unparsed.
 */
export function withoutSecrets(json: string, route?: string): string {
  if (!secretMemberNames().some((n) => json.includes(`"${n}"`))) return json;
  const { byAnswer: a, flatByRoute: f } = tables();
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return json;
  }
  const flat = route ? f.get(route) : undefined;
  return JSON.stringify(masked(flat ? hideSecrets(v, flat, 'mask') : v, a));
}

/** A capability's value without its secrets: what its events and its VIN fact hold. */
export function publicValue<T>(c: Capability, value: T): T {
  return hideSecrets(value, secretPathsOf(c), 'omit');
}
const pathsByCapability = new Map<string, string[][]>();
const secretPathsOf = (c: Capability) => {
  let p = pathsByCapability.get(c.name);
  if (!p) pathsByCapability.set(c.name, (p = secretPaths(c.value)));
  return p;
};
