import { isLoopbackHost } from '../../lib/util';

/* Loopback is the whole of 127.0.0.0/8 and ::1 (and localhost); nothing else is. */

describe('isLoopbackHost', () => {
  it.each([
    '127.0.0.1',
    '127.0.0.2',
    '127.255.255.254',
    '::1',
    '[::1]',
    '0:0:0:0:0:0:0:1',
    '::ffff:127.0.0.9',
    'localhost',
    'LocalHost',
  ])('%s is loopback', (host) => expect(isLoopbackHost(host)).toBe(true));
  it.each([
    '128.0.0.1',
    '126.255.255.255',
    '0.0.0.0',
    '::',
    '10.0.0.1',
    '::ffff:10.0.0.1',
    '127.1',
    'localhost.example.com',
    'gpu-box',
    '',
  ])('%s is not', (host) => expect(isLoopbackHost(host)).toBe(false));
});
