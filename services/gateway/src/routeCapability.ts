import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
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

type RouteHook = 'preHandler' | 'onSend' | 'onResponse';

/**
 * Attach a hook only to the routes that need it (fastify's `onRoute`), instead of to every route: a free GET
 * does not pay for idempotency or key-change hooks it can never use. Call before the routes are registered.
 */
export function addRouteHook(
  app: FastifyInstance,
  name: RouteHook,
  hook: (...args: any[]) => unknown,
  when: (route: RouteOptions) => boolean,
) {
  app.addHook('onRoute', (route) => {
    if (!when(route)) return;
    const existing = route[name];
    route[name] = (existing ? [...(Array.isArray(existing) ? existing : [existing]), hook] : [hook]) as any;
  });
}

/** The route serves a catalog capability. */
export const servesCapability = (route: RouteOptions) => route.config?.capability !== undefined;
