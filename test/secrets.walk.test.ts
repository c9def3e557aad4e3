import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  capabilities,
  eventDataSchema,
  eventEnvelope,
  publicValue,
  SECRET_NOT_REPLAYED,
  secretPaths,
  withoutSecrets,
  type Capability,
  type EventEnvelope,
} from '@vcs/contract';
import { createLogger, dec } from '@vcs/platform';
import { startEmbedded } from '@vcs/embedded';
import { call, mintKey } from './support/harness.ts';
import { sampleInput, send } from './support/capabilityCalls.ts';

// Secrets are marked once in the contract; these walk every capability's schema for the marks.
const SECRET = 'vcs_sk_test_WALK_' + 'z'.repeat(40);
const withSecrets = (c: Capability) => secretPaths(c.value);
const secretive = capabilities.filter((c) => withSecrets(c).length);

/** A value holding SECRET at every secret path of `c`, beside a member that is not secret. */
function planted(c: Capability): Record<string, unknown> {
  const v: Record<string, unknown> = { kept: 'visible' };
  for (const path of withSecrets(c)) {
    let at = v;
    for (const k of path.slice(0, -1)) at = (at[k] ??= { kept: 'visible' }) as Record<string, unknown>;
    at[path.at(-1)!] = SECRET;
  }
  return v;
}

describe("secret-marked members, walked from every capability's schema", () => {
  it('are found where the contract marks them (and a capability with none has none)', () => {
    expect(secretive.map((c) => c.name).sort()).toEqual([
      'apiKey.create',
      'apiKey.mint',
      'apiKey.revoke',
      'apiKey.rotate',
      'webhook.register',
    ]);
  });

  it.each(capabilities.map((c) => [c.name, c] as const))(
    '%s: no secret survives a stored answer, a replay, an intent read, an event or a fact',
    (_name, c) => {
      const value = planted(c);
      const answer = { type: 'OK', answers: c.answer, value, evidence: value, events: [] };
      // A stored answer and an Idempotency-Key replay (withoutSecrets: executions, intents, handoffs, the gateway).
      const stored = withoutSecrets(JSON.stringify(answer));
      expect(stored).not.toContain(SECRET);
      if (withSecrets(c).length) expect(stored).toContain(SECRET_NOT_REPLAYED); // the shape is kept
      // An intent's read holds the settled answer inside its own.
      const intent = withoutSecrets(
        JSON.stringify({
          type: 'OK',
          answers: 'Intent@1',
          value: { intent: { id: 'int_1', status: 'settled' }, answer },
        }),
      );
      expect(intent).not.toContain(SECRET);
      // What its events and its VIN fact hold: the value without its secrets, which every event's schema describes.
      const pub = publicValue(c, value);
      expect(JSON.stringify(pub)).not.toContain(SECRET);
      expect(pub).toMatchObject({ kept: 'visible' });
      for (const e of c.events)
        expect(secretPaths(eventDataSchema(e.type, c.name)!), `${e.type} declares no secret`).toEqual([]);
    },
  );

  it('the minted key of POST /keys (a flat reply) is masked in its replay', () => {
    const body = JSON.stringify({
      type: 'OK',
      key: SECRET,
      account: 'acct_1',
      keyId: 'key_1',
      prefix: 'vcs_sk_test_x',
    });
    expect(withoutSecrets(body, 'POST /keys')).not.toContain(SECRET);
  });
});

describe('secret-bearing capabilities through the running service', () => {
  let svc: Awaited<ReturnType<typeof startEmbedded>>;
  let baseUrl: string;
  const seen: EventEnvelope[] = [];
  let consumer: { stop(): Promise<void> };
  beforeAll(async () => {
    svc = await startEmbedded({ pgliteDir: 'memory://', log: createLogger('test', 'silent') });
    baseUrl = await svc.app.listen({ port: 0, host: '127.0.0.1' });
    consumer = await svc.infra.bus.consumeEvents({ durable: 'secrets-walk', filter: 'evt.>' }, async (d) => {
      seen.push(eventEnvelope.parse(JSON.parse(dec.decode(d.data))));
      d.ack();
    });
  }, 60_000);
  afterAll(async () => {
    await consumer?.stop();
    await svc?.stop();
  });

  it.each(secretive.map((c) => [c.name, c] as const))(
    '%s: the answer shows its secret once; the replay, the intent and the events do not',
    async (_name, c) => {
      const { key } = await mintKey(baseUrl);
      const headers = { 'idempotency-key': `walk-${c.name}-${Date.now()}`, 'accept-price': '1000.00 USD' };
      const input = c.name === 'webhook.register' ? { url: 'http://93.184.216.34/hook' } : sampleInput(c);
      const first = await send(baseUrl, c, input, key, headers);
      expect(first.status).toBe(200);
      const secrets = withSecrets(c)
        .map((p) => p.reduce<any>((v, k) => v?.[k], first.json.value))
        .filter((s): s is string => typeof s === 'string');
      if (c.name !== 'apiKey.revoke') expect(secrets.length).toBeGreaterThan(0); // revoking shows no new secret
      const replay = await send(baseUrl, c, input, key, headers);
      // (a revoked key's second call is refused before any replay: revoking shows no secret to replay)
      if (secrets.length) expect(replay.headers.get('idempotent-replayed')).toBe('true');
      const intentId = first.headers.get('intent-id');
      const intent = intentId ? await call(baseUrl, 'GET', `/intents/${intentId}`, { key }) : undefined;
      await svc.settled();
      expect(seen.some((e) => e.capability === c.name)).toBe(true);
      for (const s of secrets) {
        expect(replay.text).not.toContain(s);
        if (intent) expect(intent.text).not.toContain(s);
        expect(JSON.stringify(seen.filter((e) => e.capability === c.name))).not.toContain(s);
      }
    },
  );
});
