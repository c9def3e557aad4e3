import type { webhook } from '@vcs/contract';
import { newId } from '@vcs/contract';
import { ok, type HandlerTools, type NounHandlers } from '@vcs/platform';
import { SANDBOX_DEFAULT_VIN, SANDBOX_PAYER, sandboxTimestamp, stableId } from '@vcs/sandbox';
import type { ServicesPillarSettings } from '../config.ts';
import { deliveryConfig } from '../webhooks/config.ts';
import { newSecret } from '../webhooks/signature.ts';
import { targetRefusal } from '../webhooks/target.ts';

// Real records answer when the account has them; otherwise the sandbox's deterministic simulation does.
const vinOf = (input: { vin?: string }) => input.vin ?? SANDBOX_DEFAULT_VIN;
const conn = (vin: string, connId = stableId('conn_', vin)) => ({
  vin,
  noun: 'webhook',
  asOf: sandboxTimestamp().slice(0, 10),
  connId,
  status: 'active',
  scopes: ['read', 'pull', 'push'],
  kind: 'system',
});

interface EndpointRow {
  id: string;
  url: string;
  description: string | null;
  status: string;
  disabled_reason: string | null;
}

/** The endpoint named, or the account's newest one. */
async function endpointOf(t: HandlerTools, endpointId?: string): Promise<EndpointRow | null> {
  if (!t.ctx.account) return null;
  const { rows } = await t.tx.query<EndpointRow>(
    `select id, url, description, status, disabled_reason from webhook_endpoints
      where account_id = $1 and ($2::text is null or id = $2)
      order by created_at desc, id desc limit 1`,
    [t.ctx.account, endpointId ?? null],
  );
  return rows[0] ?? null;
}
const connOf = (vin: string, e: EndpointRow, t: Pick<HandlerTools, 'clock'>) => ({
  ...conn(vin, e.id),
  asOf: t.clock.now().toISOString().slice(0, 10),
  status: e.status,
});
const iso = (v: unknown) => (v == null ? null : new Date(v as string).toISOString());

async function deliveriesOf(t: HandlerTools, endpointId: string, limit: number) {
  const { rows } = await t.tx.query(
    `select id, event_id, event_type, endpoint_id, status, next_attempt_at from webhook_deliveries
     where endpoint_id = $1 order by created_at desc, id limit $2`,
    [endpointId, limit],
  );
  const attempts = rows.length
    ? (
        await t.tx.query(
          `select delivery_id, attempted_at, status_code, latency_ms, outcome, response_snippet from webhook_attempts
           where delivery_id = any($1::text[]) order by id`,
          [rows.map((r: any) => r.id)],
        )
      ).rows
    : [];
  return rows.map((d: any) => ({
    id: d.id,
    eventId: d.event_id,
    eventType: d.event_type,
    endpointId: d.endpoint_id,
    status: d.status,
    nextAttemptAt: iso(d.next_attempt_at),
    attempts: attempts
      .filter((a: any) => a.delivery_id === d.id)
      .map((a: any) => ({
        at: iso(a.attempted_at)!,
        statusCode: a.status_code,
        latencyMs: a.latency_ms,
        outcome: a.outcome,
        response: a.response_snippet,
      })),
  }));
}

export const webhookHandlers: NounHandlers<typeof webhook, ServicesPillarSettings> = {
  async read(input, t) {
    const vin = vinOf(input);
    const e = await endpointOf(t, input.endpointId);
    if (!e) return ok({ ...conn(vin), endpoint: { status: 'no-endpoint-recorded' } });
    return ok({
      ...connOf(vin, e, t),
      endpoint: {
        status: e.status,
        id: e.id,
        url: e.url,
        ...(e.description ? { description: e.description } : {}),
        ...(e.disabled_reason ? { disabledReason: e.disabled_reason } : {}),
      },
    });
  },
  async status(input, t) {
    const vin = vinOf(input);
    const e = await endpointOf(t, input.endpointId);
    if (!e)
      return ok({
        ...conn(vin),
        wire: { position: 'unwired', deliverable: false, endpoint: { status: 'no-endpoint-recorded' } },
      });
    const { rows } = await t.tx.query<{ n: number }>(
      `select count(*)::int as n from webhook_deliveries where endpoint_id = $1 and status = 'pending'`,
      [e.id],
    );
    const pending = rows[0]?.n ?? 0;
    return ok({
      ...connOf(vin, e, t),
      wire: {
        position: pending ? `${pending}-pending` : 'idle',
        deliverable: e.status === 'active',
        endpoint: { status: e.status },
      },
    });
  },
  async register(input, t) {
    const vin = vinOf(input);
    if (!input.url && !input.endpointId) {
      // No URL: the sandbox's simulated registration; nothing is recorded and no secret exists.
      return ok({ ...conn(vin), registration: { status: 'registered', id: stableId('ep_', vin) } });
    }
    if (!t.ctx.account)
      return {
        kind: 'BLOCKED',
        code: 'key-required',
        message:
          'registering a real endpoint needs a key: ' +
          'mint one with POST /keys and send it as Authorization: Bearer <key>',
      };
    // Refused at registration (and again at every connection: guardedLookup), in every notation of an address.
    const cfg = deliveryConfig(t.settings);
    const refusal = input.url
      ? await targetRefusal(input.url, {
          allowPrivate: cfg.allowPrivateTargets,
          allowLoopback: cfg.allowLoopbackTargets,
        })
      : null;
    if (refusal) {
      return {
        kind: 'BLOCKED',
        code: 'invalid-input',
        message: `webhook endpoints must be reachable public addresses: ${refusal}`,
        extra: { problems: [{ field: 'url', message: `${refusal}; use a public http(s) URL` }] },
      };
    }
    const secret = newSecret();
    if (input.endpointId) {
      // Rotation: the old secret keeps signing beside the new one for the grace period.
      const graceUntil = new Date(t.clock.now().getTime() + deliveryConfig(t.settings).rotationGraceMs).toISOString();
      const { rows } = await t.tx.query<EndpointRow>(
        `update webhook_endpoints
         set previous_secret = secret, previous_until = $3, secret = $4, url = coalesce($5, url),
           description = coalesce($6, description), status = 'active', disabled_reason = null, failing_since = null
          where id = $1 and account_id = $2 returning id, url, description, status, disabled_reason`,
        [input.endpointId, t.ctx.account, graceUntil, secret, input.url ?? null, input.description ?? null],
      );
      const e = rows[0];
      if (!e)
        return {
          kind: 'BLOCKED',
          code: 'not-found',
          message: `no endpoint ${input.endpointId} on this account; register one with a url first`,
        };
      return ok({
        ...connOf(vin, e, t),
        registration: { status: 'rotated', id: e.id, secretOnce: secret, url: e.url },
      });
    }
    const id = newId('webhookEndpoint');
    await t.tx.query(
      'insert into webhook_endpoints(id, account_id, url, description, secret) values ($1,$2,$3,$4,$5)',
      [id, t.ctx.account, input.url, input.description ?? null, secret],
    );
    return ok({
      ...conn(vin, id),
      asOf: t.clock.now().toISOString().slice(0, 10),
      registration: { status: 'registered', id, secretOnce: secret, url: input.url! },
    });
  },
  async subscribe(input, t) {
    const vin = vinOf(input);
    const e = await endpointOf(t, input.endpointId);
    if (!e) {
      if (input.endpointId)
        return {
          kind: 'BLOCKED',
          code: 'not-found',
          message: `no endpoint ${input.endpointId} on this account; register one first`,
        };
      return ok({
        ...conn(vin),
        subscription: { status: 'subscribed', id: stableId('sub_', vin), endpointId: stableId('ep_', vin) },
      });
    }
    const id = newId('subscription');
    const eventTypes = input.eventTypes ?? ['*'];
    await t.tx.query(
      'insert into webhook_subscriptions(id, account_id, endpoint_id, event_types) values ($1,$2,$3,$4)',
      [id, t.ctx.account, e.id, eventTypes],
    );
    return ok({ ...connOf(vin, e, t), subscription: { status: 'subscribed', id, endpointId: e.id, eventTypes } });
  },
  async unsubscribe(input, t) {
    const vin = vinOf(input);
    if (t.ctx.account && (input.subscriptionId || input.endpointId)) {
      const { rows } = await t.tx.query<{ id: string }>(
        `update webhook_subscriptions set status = 'unsubscribed'
         where account_id = $1 and status = 'active' and (id = $2 or endpoint_id = $3) returning id`,
        [t.ctx.account, input.subscriptionId ?? null, input.endpointId ?? null],
      );
      if (rows.length)
        return ok({
          ...conn(vin, input.endpointId ?? stableId('conn_', vin)),
          subscription: { status: 'unsubscribed', id: rows.map((r) => r.id).join(',') },
        });
    }
    return ok({ ...conn(vin), subscription: { status: 'no-subscription-recorded' } }, { events: [] });
  },
  async meteredPay(input) {
    const vin = vinOf(input);
    return ok({ ...conn(vin), payment: { status: 'settled' }, payer: SANDBOX_PAYER });
  },
  async deliveryLog(input, t) {
    const vin = vinOf(input);
    const e = await endpointOf(t, input.endpointId);
    if (!e) return ok({ ...conn(vin), log: { status: 'no-deliveries-recorded', deliveries: [] } });
    const deliveries = await deliveriesOf(t, e.id, input.limit ?? 50);
    return ok({
      ...connOf(vin, e, t),
      log: { status: deliveries.length ? 'deliveries-recorded' : 'no-deliveries-recorded', deliveries },
    });
  },
  async emit(input, t) {
    const vin = vinOf(input);
    const e = await endpointOf(t, input.endpointId);
    if (!e) return ok({ ...conn(vin), emission: { status: 'no-endpoint-recorded' } }, { events: [] });
    return ok(
      { ...connOf(vin, e, t), emission: { status: 'emitted', endpointId: e.id } },
      { eventData: { targetEndpointId: e.id, test: true } },
    );
  },
  async replay(input, t) {
    const vin = vinOf(input);
    const e = await endpointOf(t, input.endpointId);
    if (!e) return ok({ ...conn(vin), replay: { status: 'no-delivery-recorded' } }, { events: [] });
    const { rowCount } = await t.tx.query(
      `update webhook_deliveries set status = 'pending', attempt_count = 0, next_attempt_at = $2, locked_until = null
        where endpoint_id = $1 and (($3::text is not null and id = $3)
          or ($3::text is null and $4::timestamptz is not null and created_at >= $4))`,
      [e.id, t.clock.now().toISOString(), input.deliveryId ?? null, input.since ?? null],
    );
    if (!rowCount)
      return ok({ ...connOf(vin, e, t), replay: { status: 'no-delivery-recorded', deliveries: 0 } }, { events: [] });
    return ok({ ...connOf(vin, e, t), replay: { status: 'replaying', deliveries: rowCount } });
  },
  async retry(input, t) {
    const vin = vinOf(input);
    const e = await endpointOf(t, input.endpointId);
    if (!e) return ok({ ...conn(vin), retry: { status: 'no-delivery-recorded' } }, { events: [] });
    const { rowCount } = await t.tx.query(
      `update webhook_deliveries set status = 'pending', next_attempt_at = $2, locked_until = null
        where endpoint_id = $1 and status <> 'delivered' and ($3::text is null or id = $3)`,
      [e.id, t.clock.now().toISOString(), input.deliveryId ?? null],
    );
    if (!rowCount)
      return ok({ ...connOf(vin, e, t), retry: { status: 'no-delivery-recorded', deliveries: 0 } }, { events: [] });
    return ok({ ...connOf(vin, e, t), retry: { status: 'retrying', deliveries: rowCount } });
  },
  async retryState(input, t) {
    const vin = vinOf(input);
    const e = await endpointOf(t, input.endpointId);
    if (!e) return ok({ ...conn(vin), retryState: { status: 'no-delivery-recorded' } });
    const { rows } = await t.tx.query(
      `select id, event_type, attempt_count, next_attempt_at from webhook_deliveries
       where endpoint_id = $1 and status = 'pending' and attempt_count > 0 order by next_attempt_at limit 100`,
      [e.id],
    );
    const pending = rows.map((r: any) => ({
      deliveryId: r.id,
      eventType: r.event_type,
      attempts: r.attempt_count,
      nextAttemptAt: iso(r.next_attempt_at),
    }));
    return ok({
      ...connOf(vin, e, t),
      retryState: { status: pending.length ? 'retries-pending' : 'no-retries-pending', pending },
    });
  },
};
