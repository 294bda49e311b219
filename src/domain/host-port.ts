// Resolver addresses as resolv.conf and dns.getServers() write them: IP literals with an optional port (RFC 3986 §3.2.2 brackets for IPv6).
import net from 'node:net';

export interface HostPort {
  host: string;
  port: number;
}

/**
 * Parse "ip", "ip:port", a bare IPv6 address or "[ipv6]:port"; the port defaults to 53.
 * The host must be an IP address: a resolver cannot itself be found by name. Null when malformed.
 */
export function parseHostPort(text: string, defaultPort = 53): HostPort | null {
  const s = text.trim();
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(s);
  const v4 = /^([^:\[\]]+)(?::(\d{1,5}))?$/.exec(s);
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
