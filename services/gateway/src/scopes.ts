import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Capability } from '@vcs/contract';
import { presentedKey } from './auth.ts';
import type { GatewayDeps } from './deps.ts';
import { sendBlocked } from './reply.ts';
import { addRouteHook, capabilityOf, servesCapability } from './routeCapability.ts';

/**
 * The scope a capability needs, derived from the catalog: one that declares events changes something (`act`),
 * one that declares none only reads (`read`). apiKey verbs need neither: a key can always manage itself.
 */
export function scopeNeeded(c: Capability): 'read' | 'act' | null {
  if (c.noun === 'apiKey') return null;
  return c.events.length ? 'act' : 'read';
}

/** Refuse a keyed call whose key was scoped away from what the capability needs (403 forbidden). */
export function registerScopeCheck(app: FastifyInstance, deps: GatewayDeps) {
  addRouteHook(
    app,
    'preHandler',
    async (req: FastifyRequest, reply: FastifyReply) => {
      const c = capabilityOf(req);
      const needed = c && scopeNeeded(c);
      if (!needed || !presentedKey(req)) return;
      const { caller } = req;
      if (caller.kind !== 'key' || caller.scopes.includes(needed)) return;
      return sendBlocked(
        reply,
        'forbidden',
        `${c.name} needs the "${needed}" scope and this key holds [${caller.scopes.join(', ')}]; ` +
          'use a key with that scope: mint one with POST /api-keys/mint',
        { capability: c.name, scopes: caller.scopes, needed, next: { method: 'POST', path: '/api-keys/mint' } },
      );
    },
    servesCapability,
  );
}
