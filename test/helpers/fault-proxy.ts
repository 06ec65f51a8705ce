import * as net from 'node:net';

/**
 * A TCP proxy on loopback in front of a real server that can be told to reset connections once a
 * number of response bytes has passed — a connection dropped mid-object, as on a flaky network.
 */
export class FaultProxy {
  private server?: net.Server;
  private budget = Infinity;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  resets = 0;

  constructor(private readonly upstreamPort: number) {}

  async start(): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.upstreamPort, '127.0.0.1');
      this.sockets.add(client).add(upstream);
      client.on('data', (d) => upstream.write(d));
      upstream.on('data', (d: Buffer) => {
        this.budget -= d.length;
        if (this.budget < 0) {
          this.resets++;
          client.resetAndDestroy();
          upstream.destroy();
          return;
        }
        client.write(d);
      });
      const close = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server!.address() as net.AddressInfo).port;
  }

  /** Reset every connection once `bytes` more response bytes have passed (until `heal`). */
  resetAfter(bytes: number): void {
    this.budget = bytes;
  }

  heal(): void {
    this.budget = Infinity;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
