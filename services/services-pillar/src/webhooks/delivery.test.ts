import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { parseSettings } from '@vcs/platform';
import { deliveryConfig, listensOnLoopback, nextDelayMs, STANDARD_SCHEDULE_MS, webhookSettings } from './config.ts';

const settings = (env: Record<string, string>) => parseSettings(webhookSettings, env);
import { patternMatches } from './match.ts';
import { postDelivery } from './post.ts';
import { newSecret, signatureHeader } from './signature.ts';
import { guardedLookup, isForbiddenAddress, isForbiddenTarget, targetRefusal } from './target.ts';

describe('webhook delivery rules', () => {
  it('refuses loopback, private, link-local and metadata addresses, allows public ones', () => {
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
    ])
      expect(isForbiddenAddress(a), a).toBe(true);
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111']) expect(isForbiddenAddress(a), a).toBe(false);
  });

  it('judges IPv6 forms that carry an IPv4 address by that address, and refuses every special-purpose range', () => {
    // Loopback through IPv4-compatible, SIIT, NAT64 and 6to4 forms; site-local, Teredo, NAT64 local-use, documentation.
    for (const a of [
      '::127.0.0.1',
      '::ffff:0:7f00:1',
      '64:ff9b::7f00:1',
      '2002:7f00:1::',
      '64:ff9b::a9fe:a9fe',
      '2002:a00:1::',
      'fec0::1',
      '2001::1',
      '64:ff9b:1::1',
      '2001:db8::1',
      '::',
      'ff02::1',
      '255.255.255.255',
      '198.18.0.1',
      '192.0.0.1',
    ]) {
      expect(isForbiddenAddress(a), a).toBe(true);
    }
    // The same forms carrying a public address reach a public host.
    for (const a of ['64:ff9b::808:808', '2002:808:808::', '::ffff:8.8.8.8'])
      expect(isForbiddenAddress(a), a).toBe(false);
    // Loopback allowed means loopback in any notation, nothing else.
    const local = { allowPrivate: false, allowLoopback: true };
    for (const a of ['::127.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::', '::1'])
      expect(isForbiddenTarget(a, local), a).toBe(false);
    for (const a of ['64:ff9b::a9fe:a9fe', 'fec0::1', '10.0.0.1']) expect(isForbiddenTarget(a, local), a).toBe(true);
  });

  it('refuses a URL whose host is a forbidden literal in any spelling the URL parser accepts', async () => {
    const closed = { allowPrivate: false, allowLoopback: false };
    for (const u of [
      'http://2130706433/x',
      'http://0x7f.1/x',
      'http://0177.0.0.1/x',
      'http://[::127.0.0.1]/x',
      'http://[64:ff9b::7f00:1]/x',
      'http://[2002:7f00:1::]/x',
      'http://[fec0::1]/x',
      'http://[::7f00:1]/x',
      'http://[::a9fe:a9fe]/x',
      'http://[100::1]/x',
      'http://localhost/x',
      'http://localhost./x',
    ]) {
      expect(await targetRefusal(u, closed), u).toMatch(/private, loopback or reserved/);
    }
    expect(await targetRefusal('http://93.184.216.34/x', closed)).toBeNull();
  });

  it('does not send to a private IP literal unless allowed', async () => {
    const closed = { timeoutMs: 1000, capBytes: 100, allowPrivate: false, allowLoopback: false };
    const r = await postDelivery('http://127.0.0.1:9/x', {}, '{}', closed);
    expect(r.outcome).toBe('forbidden-target');
    const m = await postDelivery('http://169.254.169.254/latest/meta-data', {}, '{}', closed);
    expect(m.outcome).toBe('forbidden-target');
    // Loopback only (the embedded default): a receiver on this machine is tried, metadata still is not.
    const local = { ...closed, allowLoopback: true };
    expect((await postDelivery('http://127.0.0.1:9/x', {}, '{}', local)).outcome).not.toBe('forbidden-target');
    expect((await postDelivery('http://169.254.169.254/latest/meta-data', {}, '{}', local)).outcome).toBe(
      'forbidden-target',
    );
    expect(isForbiddenTarget('::ffff:127.0.0.1', { allowPrivate: false, allowLoopback: true })).toBe(false);
    expect(isForbiddenTarget('10.0.0.1', { allowPrivate: false, allowLoopback: true })).toBe(true);
  });

  it('refuses at connection time an IPv6 literal that maps to a private or loopback address, in every notation', async () => {
    const closed = { timeoutMs: 1000, capBytes: 100, allowPrivate: false, allowLoopback: false };
    // Each would reach this machine or a private network through the IPv4 address it carries (or is site-local).
    for (const u of [
      'http://[64:ff9b::7f00:1]/x',
      'http://[::127.0.0.1]/x',
      'http://[::ffff:0:7f00:1]/x',
      'http://[2002:7f00:1::]/x',
      'http://[::ffff:7f00:1]:9/x',
      'http://[64:ff9b::a9fe:a9fe]/latest/meta-data',
      'http://[2002:a00:1::]/x',
      'http://[fec0::1]/x',
      'http://[::]/x',
    ]) {
      const r = await postDelivery(u, {}, '{}', closed);
      expect([u, r.outcome, r.statusCode]).toEqual([u, 'forbidden-target', null]);
    }
    // A name is checked after it resolves, at the connection: the lookup the HTTP client uses refuses these too.
    const lookup = guardedLookup(closed);
    for (const a of ['64:ff9b::7f00:1', '::127.0.0.1', '2002:7f00:1::']) {
      const err = await new Promise<any>((resolve) => lookup(a, { all: true }, (e) => resolve(e)));
      expect([a, err?.code]).toEqual([a, 'EFORBIDDENTARGET']);
    }
  });

  it('allows loopback targets when WEBHOOK_ALLOW_LOOPBACK_TARGETS says so, off when unset (a pillar process)', () => {
    expect(deliveryConfig(settings({})).allowLoopbackTargets).toBe(false);
    expect(deliveryConfig(settings({ WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'true' })).allowLoopbackTargets).toBe(true);
    expect(deliveryConfig(settings({ WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'false' })).allowLoopbackTargets).toBe(false);
    expect(() => settings({ WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'yes' })).toThrow(/WEBHOOK_ALLOW_LOOPBACK_TARGETS/);
  });

  it('knows a listening address that serves this machine only (the embedded default of loopback targets)', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost'])
      expect([h, listensOnLoopback(h)]).toEqual([h, true]);
    // Listening beyond this machine, loopback targets would let any caller reach the machine's own services.
    for (const h of ['0.0.0.0', '::', '10.0.0.5', 'vcs.example.com'])
      expect([h, listensOnLoopback(h)]).toEqual([h, false]);
  });

  it('follows the Standard Webhooks schedule with bounded jitter, and ends when it runs out', () => {
    const cfg = deliveryConfig(settings({}));
    expect(cfg.scheduleMs).toEqual(STANDARD_SCHEDULE_MS);
    expect(cfg.allowPrivateTargets).toBe(false);
    expect(nextDelayMs(cfg, 1, () => 0.5)).toBe(5_000);
    const lo = nextDelayMs(cfg, 2, () => 0)!;
    const hi = nextDelayMs(cfg, 2, () => 0.999999)!;
    expect(lo).toBeGreaterThanOrEqual(270_000);
    expect(hi).toBeLessThanOrEqual(330_000);
    expect(nextDelayMs(cfg, STANDARD_SCHEDULE_MS.length)).toBeNull();
    expect(() => deliveryConfig(settings({ WEBHOOK_RETRY_SCHEDULE_MS: '0,abc' }))).toThrow(/WEBHOOK_RETRY_SCHEDULE_MS/);
  });

  it('matches exact types, any version, noun wildcards and *', () => {
    expect(patternMatches('*', 'TotalLoss.confirmed@1')).toBe(true);
    expect(patternMatches('TotalLoss.*', 'TotalLoss.confirmed@1')).toBe(true);
    expect(patternMatches('TotalLoss.*', 'Signing.quoted@1')).toBe(false);
    expect(patternMatches('TotalLoss.confirmed', 'TotalLoss.confirmed@2')).toBe(true);
    expect(patternMatches('TotalLoss.confirmed@1', 'TotalLoss.confirmed@2')).toBe(false);
  });

  it('signs so that either secret verifies during a rotation', () => {
    const [a, b] = [newSecret(), newSecret()];
    const at = new Date();
    const header = signatureHeader([b, a], 'evt_1', at, '{"x":1}');
    const headers = {
      'webhook-id': 'evt_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': header,
    };
    expect(header.split(' ').every((s) => s.startsWith('v1,'))).toBe(true);
    expect(new Webhook(a).verify('{"x":1}', headers)).toEqual({ x: 1 });
    expect(new Webhook(b).verify('{"x":1}', headers)).toEqual({ x: 1 });
    expect(() => new Webhook(newSecret()).verify('{"x":1}', headers)).toThrow();
  });
});
