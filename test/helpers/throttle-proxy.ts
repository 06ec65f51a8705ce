import * as net from 'node:net';

/**
 * A TCP proxy on loopback that lets request bytes through to a real server at a fixed rate (all
 * connections together) and after a fixed latency, so an upload through it takes seconds instead of
 * milliseconds: long enough to interrupt it midway. Responses pass unthrottled.
 */
export class ThrottleProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  /** When the shared budget next has room (ms since the epoch). */
  private nextFree = 0;
  port = 0;

  constructor(
    private readonly upstreamPort: number,
    private readonly bytesPerSecond: number,
    /** Added to every chunk's delay: a slow link's round trip, so even small requests take a while. */
    private readonly latencyMs = 0,
  ) {}

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.upstreamPort, '127.0.0.1');
      this.sockets.add(client).add(upstream);
      client.on('data', (d: Buffer) => {
        // Each chunk waits its turn on the shared budget; the client is paused meanwhile.
        const now = Date.now();
        const start = Math.max(now, this.nextFree);
        this.nextFree = start + (d.length / this.bytesPerSecond) * 1000;
        client.pause();
        setTimeout(
          () => {
            if (!upstream.destroyed) upstream.write(d);
            client.resume();
          },
          this.nextFree - now + this.latencyMs,
        );
      });
      upstream.on('data', (d: Buffer) => client.write(d));
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

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
