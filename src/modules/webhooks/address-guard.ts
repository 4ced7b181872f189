import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { buildConnector } from 'undici';

/** Resolves a host name to its addresses; the system resolver in production, a stub in tests. */
export type HostResolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolver: HostResolver = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/**
 * Whether a receiver may be dialled at this address: only globally routable unicast. ipaddr.js classifies the
 * address (its range table is the maintained list, not ours): loopback, private, link-local (169.254.169.254, the
 * cloud metadata service), CGNAT (100.100.100.200, another metadata service), unique-local (fd00:ec2::254),
 * multicast, unspecified, reserved, and the IPv6 forms that embed an IPv4 address (NAT64, 6to4, Teredo) are all
 * refused. `process` first turns an IPv4-mapped IPv6 address (::ffff:127.0.0.1) into the IPv4 address it is.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.process(address);
  if (parsed.range() !== 'unicast') return false;
  // ipaddr.js calls the deprecated IPv4-compatible form (::127.0.0.1) and other unassigned IPv6 space "unicast";
  // only global unicast (2000::/3) is routable on the internet.
  return parsed.kind() === 'ipv4' || parsed.match(globalUnicastIpv6);
}

const globalUnicastIpv6 = ipaddr.parseCIDR('2000::/3');

/**
 * The refusal of a non-public address: the attempt fails with this message and no connection is opened. The
 * message is the customer's to read (the attempt's error), so a name's internal address is never in it: naming it
 * would let a customer map the operator's internal DNS one subscription at a time.
 */
class RefusedAddressError extends Error {
  readonly code = 'EADDRREFUSED';
  constructor(hostname: string, isLiteralAddress: boolean) {
    super(isLiteralAddress ? `${hostname} is not a public address` : `${hostname} resolves to a non-public address`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net.connect/tls.connect: the check happens on the addresses the socket will actually dial, at
 * connect time, so a name that resolves to a private address (or re-resolves to one after the subscription was
 * checked: DNS rebinding) is refused. A name with any non-public address is refused as a whole.
 */
function guardedLookup(resolve: HostResolver, allowPrivate: boolean) {
  return (hostname: string, options: dns.LookupOptions | number, callback: LookupCallback): void => {
    resolve(hostname).then(
      (addresses) => {
        const refused = allowPrivate ? undefined : addresses.find((entry) => !isPublicAddress(entry.address));
        if (refused) return callback(new RefusedAddressError(hostname, false), []);
        const family = typeof options === 'number' ? options : options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
        const usable = family ? addresses.filter((entry) => entry.family === family) : addresses;
        const first = usable[0];
        if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
        if (typeof options === 'object' && options.all) return callback(null, usable);
        return callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}

/**
 * The undici connector of webhook deliveries. Host names go through the guarded lookup; an IP literal never
 * reaches a lookup (Node dials it directly), so it is checked here before any socket exists.
 */
export function guardedConnector(options: { resolve: HostResolver; allowPrivate: boolean; timeoutMs: number }): buildConnector.connector {
  // HTTP/1.1 only, as deliveries always were: undici 8 would otherwise offer HTTP/2 to a TLS receiver.
  const connect = buildConnector({ timeout: options.timeoutMs, allowH2: false, lookup: guardedLookup(options.resolve, options.allowPrivate) });
  return (connectOptions, callback) => {
    const host = connectOptions.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!options.allowPrivate && net.isIP(host) !== 0 && !isPublicAddress(host)) {
      callback(new RefusedAddressError(host, true), null);
      return;
    }
    connect(connectOptions, callback);
  };
}
