import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { normaliseVin, vinProblem } from '@vcs/contract';
import { sendBlocked } from './reply.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The methods other than `method` that serve `path` (raw, as requested); empty when no route serves it. */
    allowedMethods(method: string, path: string): string[];
  }
  interface FastifyContextConfig {
    /** The route exists only to refuse its method (405): it does not count among the path's allowed methods. */
    refusesMethod?: boolean;
  }
}

/**
 * A VIN parameter names something only when it has a VIN's length: `GET /{vin}` and the doors' `GET /<door>/{vin}`
 * take any one- or two-segment path, and `POST /anything` is an unknown path (404), not a wrong method on them. Other
 * parameters (ids) sit in paths of their own, which are known whatever the id holds.
 */
const NAMES: Record<string, (segment: string) => boolean> = {
  vin: (s) => vinProblem(normaliseVin(s))?.rule !== 'length',
};
/** HEAD is GET without the body: a path that refuses one refuses the other. */
const twins = (a: string, b: string) => a === b || (a === 'HEAD' && b === 'GET') || (a === 'GET' && b === 'HEAD');
const names = (params: Record<string, string | undefined>) =>
  Object.entries(params).every(([k, v]) => NAMES[k]?.(v ?? '') ?? true);

/**
 * Which methods each path is served with, for 405's `Allow`. Fastify's router answers 404 for a known path under a
 * wrong method, so every route is also entered in a router of our own (find-my-way, the router fastify itself uses,
 * with the app's settings) that is asked only when fastify found nothing (`app.allowedMethods`). Call before any
 * route is registered.
 */
export function registerAllowedMethods(
  app: FastifyInstance,
  routerOptions: { ignoreTrailingSlash: boolean; maxParamLength: number },
) {
  const router = FindMyWay(routerOptions);
  const methods = new Set<HTTPMethod>();
  app.addHook('onRoute', (route) => {
    if (route.url.includes('*') || route.config?.refusesMethod) return; // CORS's OPTIONS * answers every path
    for (const m of [route.method].flat() as HTTPMethod[]) {
      router.on(m, route.url, () => {});
      methods.add(m);
    }
  });
  app.decorate('allowedMethods', (method: string, path: string) =>
    [...methods]
      .filter((m) => !twins(m, method) && m !== 'OPTIONS')
      .filter((m) => {
        const found = router.find(m, path);
        return found !== null && names(found.params);
      })
      .sort(),
  );
}

/** Answer 405 for a method `path` is not served with, naming the methods it is. */
export function sendMethodNotAllowed(
  reply: FastifyReply,
  req: Pick<FastifyRequest, 'method'>,
  path: string,
  allow: string[],
  extra: Record<string, unknown> = {},
) {
  reply.header('allow', allow.join(', '));
  return sendBlocked(
    reply,
    'method-not-allowed',
    `${path} is not served with ${req.method}; it allows ${allow.join(', ')}`,
    {
      allow,
      ...(allow.includes('GET') || allow.includes('POST')
        ? { next: { method: allow.includes('GET') ? 'GET' : 'POST', path } }
        : {}),
      ...extra,
    },
  );
}

/** A route that only refuses its method with a 405 of its own wording (a GET of a link that mints, say). */
export function refuseMethod(
  app: FastifyInstance,
  method: HTTPMethods,
  url: string,
  allow: string[],
  message: string,
  extra: Record<string, unknown> = {},
) {
  app.route({
    method,
    url,
    config: { refusesMethod: true },
    handler: async (_req, reply) => {
      reply.header('allow', allow.join(', '));
      return sendBlocked(reply, 'method-not-allowed', message, { allow, ...extra });
    },
  });
}
