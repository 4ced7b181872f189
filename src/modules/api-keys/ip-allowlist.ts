import ipaddr from 'ipaddr.js';
import { ipv4MappedPrefixLength } from '../../config/limits.js';

export type CidrRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * An IPv4-mapped IPv6 range (`::ffff:127.0.0.1`, `::ffff:10.0.0.0/104`) is the IPv4 range it maps: clients are
 * compared as IPv4 (ipaddr.process), so a range kept in its IPv6 form would never match anyone.
 */
function normalized([address, prefixLength]: CidrRange): CidrRange {
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && prefixLength >= ipv4MappedPrefixLength) {
    return [(address as ipaddr.IPv6).toIPv4Address(), prefixLength - ipv4MappedPrefixLength];
  }
  return [address, prefixLength];
}

/** Parses `203.0.113.0/24`, `2001:db8::/32` or a bare address (a /32 or /128); undefined when not valid. */
export function parseCidr(value: string): CidrRange | undefined {
  const text = value.trim();
  try {
    if (text.includes('/')) return normalized(ipaddr.parseCIDR(text));
    const address = ipaddr.parse(text);
    return normalized([address, address.kind() === 'ipv4' ? 32 : 128]);
  } catch {
    return undefined;
  }
}

/** The canonical text of a range, as stored and shown. */
export function formatCidr([address, prefixLength]: CidrRange): string {
  return `${address.toString()}/${prefixLength}`;
}

/** IPv4 clients reached over an IPv6 socket appear as ::ffff:a.b.c.d; they match IPv4 ranges. */
export function ipAllowed(clientIp: string, ranges: readonly CidrRange[]): boolean {
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.process(clientIp);
  } catch {
    return false;
  }
  return ranges.some((range) => address.kind() === range[0].kind() && address.match(range));
}
