// Resolver addresses as resolv.conf and dns.getServers() write them: IP literals with an optional port (RFC 3986 §3.2.2
// brackets for IPv6); DNS_SERVERS also takes host names (RFC 1123 §2.1), looked up once at boot.
import net from 'node:net';

export interface HostPort {
  host: string;
  port: number;
}

/** A host without brackets or colons, then an optional port. */
const HOST_AND_PORT = /^([^:\[\]]+)(?::(\d{1,5}))?$/;

/**
 * Parse "ip", "ip:port", a bare IPv6 address or "[ipv6]:port"; the port defaults to 53.
 * The host must be an IP address: a resolver cannot itself be found by name. Null when malformed.
 */
export function parseHostPort(text: string, defaultPort = 53): HostPort | null {
  const s = text.trim();
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(s);
  const v4 = HOST_AND_PORT.exec(s);
  let host: string;
  let port = defaultPort;
  if (bracketed) {
    host = bracketed[1];
    if (!net.isIPv6(host)) return null;
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if (net.isIPv6(s)) {
    host = s;
  } else if (v4) {
    host = v4[1];
    if (!net.isIPv4(host)) return null;
    if (v4[2] !== undefined) port = Number(v4[2]);
  } else {
    return null;
  }
  return port >= 1 && port <= 65535 ? { host, port } : null;
}

/** An RFC 1123 host name: LDH labels of 1-63 characters, at most 253 in all, the last not all digits (that is an address). */
const HOST_NAME = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.?$/i;

/**
 * Like parseHostPort, but the host may also be a name ("name" or "name:port"), returned as written (lower case,
 * no trailing dot) for the caller to look up. Null when malformed.
 */
export function parseHostPortOrName(text: string, defaultPort = 53): HostPort | null {
  const byAddress = parseHostPort(text, defaultPort);
  if (byAddress) return byAddress;
  const m = HOST_AND_PORT.exec(text.trim());
  if (!m || !HOST_NAME.test(m[1])) return null;
  const host = m[1].toLowerCase().replace(/\.$/, '');
  if (/^\d+$/.test(host.slice(host.lastIndexOf('.') + 1))) return null;
  const port = m[2] === undefined ? defaultPort : Number(m[2]);
  return port >= 1 && port <= 65535 ? { host, port } : null;
}
