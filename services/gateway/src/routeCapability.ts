import type { FastifyRequest } from 'fastify';
import type { Capability } from '@vcs/contract';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The catalog capability a route serves; set by the capability routes, read by the hooks. */
    capability?: Capability;
  }
}

/** The capability this request's route serves, or undefined for platform faces and unmatched routes. */
export function capabilityOf(req: FastifyRequest): Capability | undefined {
  return req.routeOptions.config?.capability;
}
