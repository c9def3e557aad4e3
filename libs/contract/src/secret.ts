import { z } from 'zod';

/**
 * A secret member, marked once in its schema (`secret: true` in its metadata, which the catalog's JSON Schema shows):
 * shown in the one answer that makes it, and kept out of everything else that is derived from the schema.
 */
export const secret = <S extends z.ZodType>(schema: S, description: string): S => schema.meta({ secret: true, description }) as S;
export const isSecret = (schema: z.ZodType): boolean => z.globalRegistry.get(schema)?.secret === true;

/** `schema` without its secret-marked members, at any depth of nested objects (what an event's `data` may hold). */
export function publicSchema(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodObject) {
    const shape: Record<string, z.ZodType> = {};
    let changed = false;
    for (const [k, v] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
      if (isSecret(v)) { changed = true; continue; }
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
