/**
 * What an operator's tools see of the pillars: NATS's micro-services discovery (`$SRV.PING`, `$SRV.INFO`, `$SRV.STATS`,
 * plain, by service name and by name and id), answered by every replica of the built pillars on real NATS, with each
 * endpoint of the catalog and its requests, errors and processing time after real calls.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  ServiceResponseType,
  type ServiceIdentity,
  type ServiceInfo,
  type ServiceResponse,
  type ServiceStats,
} from '@nats-io/services';
import { capabilitiesOfPillar, opList, pillars, type Pillar } from '@vcs/contract';
import { pillarService } from '../deploy/services.ts';
import { serversFor, startDistributedHarness, waitFor, type Harness } from './support/harness.ts';

const VIN = '1HGCM82633A004352';
const ctx = {
  requestId: 'request_srv',
  account: null,
  keyId: null,
  environment: 'sandbox',
  trigger: null,
  settled: false,
};
/** The data pillar runs two replicas; the others one each. */
const replicas = (p: Pillar) => (p === 'data' ? 2 : 1);

describe.runIf(serversFor('service discovery suite'))('NATS service discovery of the pillars (real NATS)', () => {
  let h: Harness;
  let nc: NatsConnection;
  let ns: string;

  /**
   * Every replica of this run's deployment answering a `$SRV` subject (others sharing the NATS answer too: each service
   * names its NATS_NAMESPACE in its metadata), its latest answer each, asked until `enough` of them have answered: on a
   * busy machine one request may not gather every answer before it stops listening.
   */
  async function ask<T extends ServiceResponse & { id: string; metadata?: Record<string, string> }>(
    subject: string,
    enough: number,
  ): Promise<T[]> {
    const mine = new Map<string, T>();
    await waitFor(async () => {
      const replies = await nc.requestMany(subject, '', { strategy: 'stall', stall: 300, maxWait: 5000 });
      for await (const m of replies) {
        const r = m.json<T>();
        if (r.metadata?.namespace === ns) mine.set(r.id, r);
      }
      return mine.size >= enough;
    }, 30_000);
    return [...mine.values()];
  }
  const stats = async (name: string) =>
    new Map(
      (await ask<ServiceStats>(`$SRV.STATS.${name}`, name === 'data' ? 2 : 1)).map((s) => [
        s.id,
        new Map(s.endpoints!.map((e) => [e.name, e])),
      ]),
    );
  const sumOf = (byId: Awaited<ReturnType<typeof stats>>, endpoint: string, field: 'num_requests' | 'num_errors') =>
    [...byId.values()].reduce((n, eps) => n + eps.get(endpoint)![field], 0);

  beforeAll(async () => {
    h = await startDistributedHarness({ replicas: { data: 2 } });
    ns = h.env!.NATS_NAMESPACE!;
    nc = await connect({ servers: h.env!.NATS_URL! });
  });
  afterAll(async () => {
    await nc?.close();
    await h?.stop();
  });

  it('every replica of every pillar answers $SRV.PING, by name, and by name and id', async () => {
    const total = pillars.reduce((n, p) => n + replicas(p), 0);
    const pings = await ask<ServiceIdentity>('$SRV.PING', total);
    expect(pings).toHaveLength(total);
    expect(new Set(pings.map((p) => p.id)).size).toBe(total);
    for (const p of pillars) {
      const name = pillarService[p];
      const mine = pings.filter((r) => r.name === name);
      expect(mine, name).toHaveLength(replicas(p));
      for (const r of mine) {
        expect(r).toMatchObject({ type: ServiceResponseType.PING, version: '0.1.0', metadata: { pillar: p } });
        // The replica as `x-served-by` names it: <service>@<version>/<host>/<pid>.
        expect(r.metadata!.served_by).toMatch(new RegExp(`^${name}@0\\.1\\.0/.+/\\d+$`));
      }
      const byName = await ask<ServiceIdentity>(`$SRV.PING.${name}`, replicas(p));
      expect(byName.map((r) => r.id).sort()).toEqual(mine.map((r) => r.id).sort());
      for (const r of mine) {
        const one = await ask<ServiceIdentity>(`$SRV.PING.${name}.${r.id}`, 1);
        expect(one.map((x) => x.id)).toEqual([r.id]);
      }
    }
  });

  it('$SRV.INFO lists each capability and operation of the pillar as an endpoint: subject and queue group', async () => {
    for (const p of pillars) {
      const name = pillarService[p];
      const infos = await ask<ServiceInfo>(`$SRV.INFO.${name}`, replicas(p));
      const expected = [
        ...capabilitiesOfPillar(p).map((c) => [c.name, c.subject] as const),
        ...opList.filter((o) => o.pillar === p).map((o) => [o.name, o.subject] as const),
      ]
        .map(([n, subject]) => ({
          name: n.replaceAll('.', '_'),
          subject: `${ns}.${subject}`,
          queue_group: `pillar.${p}`,
        }))
        .sort((a, b) => a.name.localeCompare(b.name));
      expect(infos).toHaveLength(replicas(p));
      for (const info of infos) {
        expect(info).toMatchObject({ type: ServiceResponseType.INFO, name, version: '0.1.0' });
        expect(info.description).toContain(`${p} pillar`);
        const endpoints = info.endpoints
          .map((e) => ({ name: e.name, subject: e.subject, queue_group: e.queue_group }))
          .sort((a, b) => a.name.localeCompare(b.name));
        expect(endpoints, name).toEqual(expected);
      }
    }
  });

  it('$SRV.STATS counts requests, errors and processing time after real calls, summed over the replicas', async () => {
    const before = await stats('services-pillar');
    const [id] = [...before.keys()];
    const seen = (s: typeof before) => s.get(id!)!.get('signing_status')!;
    // Five answers through the gateway (200); on the bus, two refusals of the caller's input (400: not an error of
    // the pillar's; the gateway would refuse them itself) and one request the pillar cannot read (500: an error).
    for (let i = 0; i < 5; i++) expect((await fetch(`${h.baseUrl}/signings/status?vin=${VIN}`)).status).toBe(200);
    const subject = `${ns}.cap.services.signing.status`;
    const refused = JSON.stringify({ input: { vin: 'NOT-A-VIN' }, ctx });
    for (let i = 0; i < 2; i++)
      expect((await nc.request(subject, refused, { timeout: 5000 })).string()).toMatch(/^400 /);
    expect((await nc.request(subject, 'not json', { timeout: 5000 })).string()).toMatch(/^500 BLOCKED /);

    const after = await stats('services-pillar');
    expect(seen(after).num_requests - seen(before).num_requests).toBe(8);
    expect(seen(after).num_errors - seen(before).num_errors).toBe(1);
    expect(seen(after).last_error).toMatch(/^500 internal: signing\.status failed unexpectedly/);
    expect(seen(after).processing_time).toBeGreaterThan(seen(before).processing_time);
    expect(seen(after).average_processing_time).toBeGreaterThan(0);
    expect((await stats(`services-pillar.${id}`)).get(id!)!.get('signing_status')!.num_requests).toBe(
      seen(after).num_requests,
    );

    // The two data replicas share one queue group: twenty calls are counted once each, over both.
    const dataBefore = await stats('data');
    for (let i = 0; i < 20; i++) expect((await fetch(`${h.baseUrl}/mcos/status?vin=${VIN}`)).status).toBe(200);
    const dataAfter = await stats('data');
    expect(sumOf(dataAfter, 'mco_status', 'num_requests') - sumOf(dataBefore, 'mco_status', 'num_requests')).toBe(20);
    expect(sumOf(dataAfter, 'mco_status', 'num_errors')).toBe(0);
    for (const [replica, eps] of dataAfter)
      expect(eps.get('mco_status')!.num_requests, `replica ${replica}`).toBeGreaterThan(0);
  });
});
