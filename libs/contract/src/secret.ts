import { z } from 'zod';

/**
 * A secret member, marked once in its schema (`x-secret: true` in its metadata, which the catalog's JSON Schema and
 * the OpenAPI document show: an `x-` name, since neither knows a `secret` keyword): shown in the one answer that
 * makes it, and kept out of everything else that is derived from the schema.
 */
export const secret = <S extends z.ZodType>(schema: S, description: string): S =>
  schema.meta({ 'x-secret': true, description }) as S;
export const isSecret = (schema: z.ZodType): boolean => z.globalRegistry.get(schema)?.['x-secret'] === true;

/** `schema` without its secret-marked members, at any depth of nested objects (what an event's `data` may hold). */
export function publicSchema(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodObject) {
    const shape: Record<string, z.ZodType> = {};
    let changed = false;
    for (const [k, v] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      if (isSecret(v)) {
        changed = true;
        continue;
      }
      const p = publicSchema(v);
      if (p !== v) changed = true;
      shape[k] = p;
    }
    return changed ? z.object(shape) : schema;
  }
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) {
    const inner = publicSchema(schema.unwrap() as z.ZodType);
    return inner === schema.unwrap() ? schema : schema instanceof z.ZodOptional ? inner.optional() : inner.nullable();
  }
  return schema;
}

/**
 * Where a schema holds secret-marked members: each a path of member names (objects, optional/nullable members,
 * unions and intersections are followed; a secret inside an array would need `*`, and none is declared).
 */
export function secretPaths(schema: z.ZodType, at: string[] = []): string[][] {
  if (schema instanceof z.ZodObject) {
    return Object.entries(schema.shape as Record<string, z.ZodType>).flatMap(([k, v]) =>
      isSecret(v) ? [[...at, k]] : secretPaths(v, [...at, k]),
    );
  }
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault)
    return secretPaths(schema.unwrap() as z.ZodType, at);
  if (schema instanceof z.ZodUnion) return dedupe((schema.options as z.ZodType[]).flatMap((o) => secretPaths(o, at)));
  if (schema instanceof z.ZodIntersection)
    return dedupe([
      ...secretPaths(schema.def.left as z.ZodType, at),
      ...secretPaths(schema.def.right as z.ZodType, at),
    ]);
  return [];
}
const dedupe = (paths: string[][]) => [...new Map(paths.map((p) => [p.join('.'), p])).values()];

/** What a stored or replayed copy holds where a secret was: the shape stays, the secret does not. */
export const SECRET_NOT_REPLAYED = '<shown once; not replayed>';

/** A copy of `value` with each secret path masked (stored answers, replays) or left out (events, facts). */
export function hideSecrets<T>(value: T, paths: readonly string[][], how: 'mask' | 'omit'): T {
  if (!paths.length || !value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  const heads = new Map<string, string[][]>();
  for (const [head, ...rest] of paths) {
    if (!(head! in out)) continue;
    if (!rest.length) {
      if (how === 'omit') delete out[head!];
      else if (out[head!] !== undefined) out[head!] = SECRET_NOT_REPLAYED;
      continue;
    }
    heads.set(head!, [...(heads.get(head!) ?? []), rest]);
  }
  for (const [head, rest] of heads) out[head] = hideSecrets(out[head], rest, how);
  return out as T;
}
