import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { capabilities, FREE_METER, pricingRow } from '@vcs/contract';

/**
 * The price surface, generated from the catalog once at start: every priced capability with its model and hard
 * ceiling.
 */
export function pricingDocument() {
  const priced = capabilities.filter((c) => c.price.model !== 'free').map(pricingRow);
  const value = {
    currency: 'USD',
    note:
      'Prices are per call. `ceiling` is the most one call can cost, take-rates included; the sandbox charges 0.00. ' +
      'Capabilities not listed are free.',
    acceptPriceHeader: 'Accept-Price: <amount> <currency> settles an offer at once when its ceiling is within it',
    capabilities: priced,
  };
  return {
    type: 'OK',
    answers: 'Pricing@1',
    value,
    evidence: value,
    provenance: { simulated: false, environment: 'sandbox', source: 'gateway' },
    events: [],
    meter: FREE_METER,
  };
}

export async function pricingRoutes(app: FastifyInstance) {
  const body = JSON.stringify(pricingDocument());
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  app.get('/pricing', async (req, reply) => {
    reply.header('etag', etag).header('cache-control', 'public, max-age=300');
    const inm = req.headers['if-none-match'];
    if (
      typeof inm === 'string' &&
      inm
        .split(',')
        .map((s) => s.trim().replace(/^W\//, ''))
        .includes(etag)
    )
      return reply.code(304).send();
    return reply.code(200).type('application/json').send(body);
  });
}
