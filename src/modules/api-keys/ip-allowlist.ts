import ipaddr from 'ipaddr.js';

export type CidrRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses `203.0.113.0/24`, `2001:db8::/32` or a bare address (a /32 or /128); undefined when not valid. */
export function parseCidr(value: string): CidrRange | undefined {
  const text = value.trim();
  try {
    if (text.includes('/')) return ipaddr.parseCIDR(text);
    const address = ipaddr.parse(text);
    return [address, address.kind() === 'ipv4' ? 32 : 128];
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
