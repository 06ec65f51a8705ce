import { BlockList, isIP } from 'node:net';

/*
 * Addresses only this machine can reach: all of 127.0.0.0/8 (Linux answers every one of them on lo),
 * ::1, and IPv4-mapped ::ffff:127.x.y.z; plus the name localhost.
 */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/** Whether `host` (an address or `localhost`, possibly in [brackets]) is a loopback address. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[(.*)\]$/, '$1');
  if (h.toLowerCase() === 'localhost') return true;
  const family = isIP(h);
  return family !== 0 && LOOPBACK.check(h, family === 6 ? 'ipv6' : 'ipv4');
}
