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
/** One hook of kind `N`, as fastify types a route's own hooks. */
type HookOf<N extends RouteHook> = Exclude<NonNullable<RouteOptions[N]>, unknown[]>;
/** A route's hooks of these kinds: none, one, or a list (what `onRoute` sees on RouteOptions). */
type RouteHooks = { [N in RouteHook]?: HookOf<N> | HookOf<N>[] };

/**
 * Attach a hook only to the routes that need it (fastify's `onRoute`), instead of to every route: a free GET
 * does not pay for idempotency or key-change hooks it can never use. Call before the routes are registered.
 */
export function addRouteHook<N extends RouteHook>(
  app: FastifyInstance,
  name: N,
  hook: HookOf<N>,
  when: (route: RouteOptions) => boolean,
) {
  app.addHook('onRoute', (route) => {
    if (!when(route)) return;
    const hooks: RouteHooks = route;
    const existing = hooks[name];
    hooks[name] = existing ? [...(Array.isArray(existing) ? existing : [existing]), hook] : [hook];
  });
}

/** The route serves a catalog capability. */
export const servesCapability = (route: RouteOptions) => route.config?.capability !== undefined;
