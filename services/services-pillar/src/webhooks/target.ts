import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

// Where a delivery must never go: loopback, private, link-local (cloud metadata lives there), CGNAT, unspecified.
const blocked = new BlockList();
for (const [net, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4]] as const) {
  blocked.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) blocked.addSubnet(net, bits, 'ipv6');

export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  }
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** Which reserved addresses a delivery may still reach: all of them, loopback only (local development), or none. */
export interface TargetPolicy { allowPrivate: boolean; allowLoopback: boolean }

export function isForbiddenTarget(address: string, policy: TargetPolicy): boolean {
  if (policy.allowPrivate) return false;
  const family = isIP(address);
  const v4 = family === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] : undefined;
  if (policy.allowLoopback && (v4 ? loopback.check(v4, 'ipv4') : family !== 0 && loopback.check(address, family === 4 ? 'ipv4' : 'ipv6'))) return false;
  return isForbiddenAddress(address);
}

export class ForbiddenTargetError extends Error { code = 'EFORBIDDENTARGET'; }

/**
 * A DNS lookup for the HTTP client that refuses forbidden addresses after resolution, so the address
 * checked is the address connected to (no window for DNS rebinding between check and connect).
 */
export function guardedLookup(policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return (callback as any)(err);
      const list = addresses as { address: string; family: number }[];
      const bad = list.find((a) => isForbiddenTarget(a.address, policy));
      if (bad) return (callback as any)(new ForbiddenTargetError(`${hostname} resolves to ${bad.address}, a private or reserved address`));
      if ((options as any).all) return (callback as any)(null, list);
      (callback as any)(null, list[0]!.address, list[0]!.family);
    });
  };
}
