import { z } from 'zod';
import { defineNoun, type CapabilitySpec, type EventDecl } from '../capability.ts';
import { timestamp } from '../answer.ts';
import { payer, price, valueBase, vinOptional } from '../common.ts';
import { secret } from '../secret.ts';

/** Connection members every webhook value carries (the spec's Connection entity). */
const connection = valueBase.extend({
  connId: z.string().meta({ description: 'The connection (endpoint) the answer is about', example: 'ep_...' }),
  status: z.string().meta({ example: 'active' }),
  scopes: z.array(z.string()).meta({ example: ['read', 'pull', 'push'] }),
  kind: z.string().meta({ example: 'system' }),
});

const endpointId = z
  .string()
  .regex(/^ep_[A-Za-z0-9_-]+$/)
  .meta({ description: 'An endpoint id from webhook.register', example: 'ep_3f2a9c1e7b4d' });
const eventPattern = z
  .string()
  .regex(/^(\*|[A-Z][A-Za-z]*\.(\*|[a-z][A-Za-z]*(@\d+)?))$/)
  .meta({
    description: 'An event type (`TotalLoss.confirmed`, optionally `@1`), a noun wildcard (`TotalLoss.*`) or `*`',
    example: 'TotalLoss.*',
  });
const url = z
  .string()
  .url()
  .max(2048)
  .refine((u) => /^https?:\/\//i.test(u), 'the URL must be http or https')
  .meta({
    description: 'Where deliveries are POSTed (https; http is accepted for local receivers)',
    example: 'https://example.com/hooks/vcs',
  });

const withVin = <S extends z.ZodRawShape>(shape: S) => vinOptional.extend(shape).strict();
const endpointView = z.object({
  status: z.string().meta({ description: 'active, disabled or no-endpoint-recorded', example: 'active' }),
  id: z.string().optional(),
  url: z.string().optional(),
  description: z.string().optional(),
  disabledReason: z.string().optional(),
});
const delivery = z.object({
  id: z.string().meta({ example: 'dlv_...' }),
  eventId: z.string(),
  eventType: z.string(),
  endpointId: z.string(),
  status: z.string().meta({ description: 'pending, delivered or failed', example: 'delivered' }),
  attempts: z.array(
    z.object({
      at: timestamp,
      statusCode: z.number().int().nullable(),
      latencyMs: z.number().int(),
      outcome: z.string().meta({ example: 'http-500' }),
      response: z.string().meta({ description: 'The first bytes of the response (capped)' }),
    }),
  ),
  nextAttemptAt: timestamp.nullable(),
});

/** A free read (the spec's four data capabilities); typed so each handler sees its own request and value. */
const data = <R extends z.ZodObject, V extends z.ZodType>(
  path: string,
  summary: string,
  request: R,
  answer: `${string}@1`,
  value: V,
  gate: 'none' | 'key' = 'none',
) =>
  ({
    method: 'GET',
    path,
    gate,
    mode: 'sandbox',
    facet: 'data',
    summary,
    request,
    answer,
    value,
    events: [] as EventDecl[],
    price: price.free(),
  }) satisfies CapabilitySpec<R, V>;

export const webhook = defineNoun({
  noun: 'webhook',
  pillar: 'services',
  displayPillar: 'Services',
  entity: 'Connection',
  door: 'webhooks',
  summary:
    "Signed webhook delivery of the event stream to the account's own endpoints, " +
    'with retries, replay and a delivery log.',
  capabilities: {
    read: data(
      '/webhooks/read',
      "The account's endpoint: its standing.",
      withVin({ endpointId: endpointId.optional() }),
      'WebhookRead@1',
      connection.extend({ endpoint: endpointView }),
    ),
    status: data(
      '/webhooks/status',
      'Whether the wire is deliverable: endpoint standing and position in the delivery queue.',
      withVin({ endpointId: endpointId.optional() }),
      'WebhookStatus@1',
      connection.extend({
        wire: z.object({
          position: z.string().meta({ example: 'idle' }),
          deliverable: z.boolean(),
          endpoint: z.object({ status: z.string() }),
        }),
      }),
    ),
    register: {
      method: 'POST',
      path: '/webhooks/register',
      gate: 'offer',
      mode: 'sandbox',
      facet: 'services',
      summary: 'Register an endpoint (or rotate the secret of one). The signing secret is returned once.',
      request: withVin({
        url: url.optional().meta({
          description: 'The endpoint URL. Without it the sandbox answers a simulated registration and records nothing.',
        }),
        description: z.string().max(200).optional(),
        endpointId: endpointId.optional().meta({
          description: 'Re-register this endpoint: rotate its secret (the old one keeps signing for the grace period)',
        }),
      }),
      answer: 'WebhookRegister@1',
      value: connection.extend({
        registration: z.object({
          status: z.string().meta({ example: 'registered' }),
          id: z.string(),
          secretOnce: secret(z.string().optional(), 'The signing secret `whsec_…`: present only in this answer'),
          url: z.string().optional(),
        }),
      }),
      events: [{ type: 'Webhook.registered@1', when: 'success' }],
      price: price.metered('0.50', 'endpoint'),
    },
    subscribe: {
      method: 'POST',
      path: '/webhooks/subscribe',
      gate: 'offer',
      mode: 'sandbox',
      facet: 'services',
      summary: 'Subscribe an endpoint to event types (wildcards allowed).',
      request: withVin({
        endpointId: endpointId.optional(),
        eventTypes: z.array(eventPattern).min(1).max(50).optional().meta({ description: 'Defaults to ["*"]' }),
      }),
      answer: 'WebhookSubscribe@1',
      value: connection.extend({
        subscription: z.object({
          status: z.string().meta({ example: 'subscribed' }),
          id: z.string(),
          endpointId: z.string(),
          eventTypes: z.array(z.string()).optional(),
        }),
      }),
      events: [{ type: 'Webhook.subscribed@1', when: 'success' }],
      price: price.metered('0.10', 'subscription'),
    },
    unsubscribe: {
      method: 'POST',
      path: '/webhooks/unsubscribe',
      gate: 'offer',
      mode: 'sandbox',
      facet: 'services',
      summary: 'Stop a subscription (by its id), or every subscription of an endpoint.',
      request: withVin({
        subscriptionId: z
          .string()
          .regex(/^sub_[A-Za-z0-9_-]+$/)
          .optional()
          .meta({ description: 'A subscription id from webhook.subscribe', example: 'sub_7c1d0e2f9a3b' }),
        endpointId: endpointId.optional(),
      }),
      answer: 'WebhookUnsubscribe@1',
      value: connection.extend({
        subscription: z.object({ status: z.string().meta({ example: 'unsubscribed' }), id: z.string().optional() }),
      }),
      events: [{ type: 'Webhook.unsubscribed@1', when: 'success' }],
      price: price.metered('0.05', 'subscription'),
    },
    meteredPay: {
      failureCode: 'payment-failed',
      method: 'POST',
      path: '/webhooks/metered-pay',
      gate: 'offer',
      mode: 'sandbox',
      facet: 'commerce',
      summary: 'Pay the metered delivery charges of the connection.',
      request: vinOptional,
      answer: 'WebhookMeteredPay@1',
      value: connection.extend({ payment: z.object({ status: z.string().meta({ example: 'settled' }) }), payer }),
      events: [
        { type: 'Webhook.meteredPaid@1', when: 'success' },
        { type: 'Webhook.failed@1', when: 'failure' },
      ],
      price: price.takeRate('0.029', 'the amount paid', '0.29', '5.00'),
    },
    deliveryLog: data(
      '/webhooks/delivery-log',
      "The deliveries to the account's endpoints, each with every attempt.",
      withVin({ endpointId: endpointId.optional(), limit: z.coerce.number().int().min(1).max(200).optional() }),
      'WebhookDeliveryLog@1',
      connection.extend({
        log: z.object({
          status: z.string().meta({ example: 'no-deliveries-recorded' }),
          deliveries: z.array(delivery),
        }),
      }),
      'key',
    ),
    emit: {
      method: 'POST',
      path: '/webhooks/emit',
      gate: 'offer',
      mode: 'sandbox',
      facet: 'services',
      summary: 'Send a test event (Webhook.emitted@1) to an endpoint.',
      request: withVin({ endpointId: endpointId.optional() }),
      answer: 'WebhookEmit@1',
      value: connection.extend({
        emission: z.object({ status: z.string().meta({ example: 'emitted' }), endpointId: z.string().optional() }),
      }),
      events: [
        {
          type: 'Webhook.emitted@1',
          when: 'success',
          extra: z.object({ targetEndpointId: z.string(), test: z.literal(true) }).partial(),
        },
      ],
      price: price.metered('0.01', 'event'),
    },
    replay: {
      method: 'POST',
      path: '/webhooks/replay',
      gate: 'offer',
      mode: 'sandbox',
      facet: 'services',
      summary: 'Re-send one delivery, or every delivery since a time.',
      request: withVin({
        endpointId: endpointId.optional(),
        deliveryId: z
          .string()
          .regex(/^dlv_[A-Za-z0-9_-]+$/)
          .optional()
          .meta({ description: 'A delivery id, as its webhook carried it', example: 'dlv_1a2b3c4d5e6f' }),
        since: timestamp.optional(),
      }),
      answer: 'WebhookReplay@1',
      value: connection.extend({
        replay: z.object({
          status: z.string().meta({ example: 'replaying' }),
          deliveries: z.number().int().optional(),
        }),
      }),
      events: [{ type: 'Webhook.replayed@1', when: 'success' }],
      price: price.metered('0.01', 'delivery replayed'),
    },
    retry: {
      method: 'POST',
      path: '/webhooks/retry',
      gate: 'offer',
      mode: 'sandbox',
      facet: 'services',
      summary: 'Retry pending deliveries now instead of at their scheduled time.',
      request: withVin({
        endpointId: endpointId.optional(),
        deliveryId: z
          .string()
          .regex(/^dlv_[A-Za-z0-9_-]+$/)
          .optional()
          .meta({ description: 'A delivery id, as its webhook carried it', example: 'dlv_1a2b3c4d5e6f' }),
      }),
      answer: 'WebhookRetry@1',
      value: connection.extend({
        retry: z.object({ status: z.string().meta({ example: 'retrying' }), deliveries: z.number().int().optional() }),
      }),
      events: [{ type: 'Webhook.retried@1', when: 'success' }],
      price: price.metered('0.01', 'delivery retried'),
    },
    retryState: data(
      '/webhooks/retry-state',
      'The pending retries: which deliveries wait, and until when.',
      withVin({ endpointId: endpointId.optional() }),
      'WebhookRetryState@1',
      connection.extend({
        retryState: z.object({
          status: z.string().meta({ example: 'no-delivery-recorded' }),
          pending: z
            .array(
              z.object({
                deliveryId: z.string(),
                eventType: z.string(),
                attempts: z.number().int(),
                nextAttemptAt: timestamp.nullable(),
              }),
            )
            .optional(),
        }),
      }),
    ),
  },
});
