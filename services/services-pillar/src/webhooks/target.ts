import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { promises as dns } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * The IPv4 address an IPv6 address carries, in the forms that reach IPv4 hosts: mapped (::ffff:a.b.c.d), the
 * deprecated compatible form (::a.b.c.d, parsed as mapped), SIIT (::ffff:0:a.b.c.d), NAT64's well-known prefix
 * (64:ff9b::a.b.c.d) and 6to4 (2002:AABB:CCDD::). Each is judged by the IPv4 address inside it.
 */
function embeddedIPv4(a: ipaddr.IPv6): ipaddr.IPv4 | null {
  const range = a.range();
  const b = a.toByteArray();
  // ::a.b.c.d
  const compatible = b.slice(0, 12).every((x) => x === 0) && range !== 'unspecified' && range !== 'loopback';
  if (
    compatible ||
    range === 'ipv4Mapped' ||
    range === 'rfc6145' ||
    (range === 'rfc6052' && a.match(ipaddr.IPv6.parse('64:ff9b::'), 96))
  ) {
    return ipaddr.IPv4.parse(b.slice(12).join('.'));
  }
  if (range === '6to4') return ipaddr.IPv4.parse(b.slice(2, 6).join('.'));
  return null;
}

/** The address a connection would really reach: an IPv6 form that carries an IPv4 address is that address. */
function effective(a: Address): Address {
  return a.kind() === 'ipv6' ? (embeddedIPv4(a as ipaddr.IPv6) ?? a) : a;
}

/**
 * Only globally routable unicast is a delivery target. ipaddr.js names every special-purpose range (IANA's
 * registries): loopback, private, link-local (cloud metadata lives there), CGNAT, multicast, broadcast,
 * unspecified, reserved, benchmarking, unique-local, site-local, Teredo, NAT64's local-use prefix and the rest;
 * anything not `unicast` is refused, so a range added to the registries is refused by default.
 */
export function isForbiddenAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  const a = effective(ipaddr.parse(address));
  // IPv6: only the global unicast block (2000::/3) is routed on the internet; the rest is reserved or local.
  return a.range() !== 'unicast' || (a.kind() === 'ipv6' && !a.match(GLOBAL_UNICAST));
}
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');

/** Which reserved addresses a delivery may still reach: all of them, loopback only (local development), or none. */
export interface TargetPolicy {
  allowPrivate: boolean;
  allowLoopback: boolean;
}

export function isForbiddenTarget(address: string, policy: TargetPolicy): boolean {
  if (policy.allowPrivate) return false;
  if (!ipaddr.isValid(address)) return true;
  if (policy.allowLoopback && effective(ipaddr.parse(address)).range() === 'loopback') return false;
  return isForbiddenAddress(address);
}

export class ForbiddenTargetError extends Error {
  code = 'EFORBIDDENTARGET';
}

/**
 * A URL's host as an address when it is an IP literal (the WHATWG parser has already normalised 0x7f.1 and the like).
 */
export function literalHost(url: URL): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return ipaddr.isValid(host) ? host : null;
}

/**
 * Why a URL may not be registered as an endpoint, or null. An IP literal is judged as it is; a name is resolved
 * and refused if any address it has now is forbidden (a name that does not resolve yet is accepted: delivery
 * checks again at every connection, see guardedLookup).
 */
export async function targetRefusal(url: string, policy: TargetPolicy): Promise<string | null> {
  const u = new URL(url);
  const literal = literalHost(u);
  if (literal)
    return isForbiddenTarget(literal, policy) ? `${u.hostname} is a private, loopback or reserved address` : null;
  // RFC 6761: localhost and its subdomains are loopback whatever a resolver says (and with a trailing dot too).
  if (/(^|\.)localhost\.*$/i.test(u.hostname))
    return isForbiddenTarget('127.0.0.1', policy) ? `${u.hostname} is a private, loopback or reserved address` : null;
  let addresses: { address: string }[];
  try {
    addresses = await dns.lookup(u.hostname, { all: true, verbatim: true });
  } catch {
    return null;
  }
  const bad = addresses.find((a) => isForbiddenTarget(a.address, policy));
  return bad ? `${u.hostname} resolves to ${bad.address}, a private, loopback or reserved address` : null;
}

/**
 * How a lookup answers: the error alone (as node's own lookups do), all the addresses (`options.all`), or one address
 * and its family. Node's `LookupFunction` types its callback as if an address always came with the error.
 */
interface LookupAnswer {
  (err: NodeJS.ErrnoException): void;
  (err: null, addresses: LookupAddress[]): void;
  (err: null, address: string, family: number): void;
}

/**
 * A DNS lookup for the HTTP client that refuses forbidden addresses after resolution, so the address
 * checked is the address connected to (no window for DNS rebinding between check and connect).
 */
export function guardedLookup(policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    const answer = callback as LookupAnswer;
    dnsLookup(hostname, { ...options, all: true }, (err, list) => {
      if (err) return answer(err);
      const bad = list.find((a) => isForbiddenTarget(a.address, policy));
      if (bad)
        return answer(
          new ForbiddenTargetError(`${hostname} resolves to ${bad.address}, a private or reserved address`),
        );
      if (options.all) return answer(null, list);
      answer(null, list[0]!.address, list[0]!.family);
    });
  };
}
