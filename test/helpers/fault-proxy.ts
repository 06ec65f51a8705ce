import * as net from 'node:net';
import * as tls from 'node:tls';

/**
 * A TCP proxy on loopback in front of a real server that can be told to reset connections once a
 * number of response bytes has passed — a connection dropped mid-object, as on a flaky network —
 * and that counts the S3 requests passing through it (GET of an object, LIST, HEAD). Given a key and
 * certificate, it speaks TLS to its clients (as S3 does) and plain TCP to the server.
 */
export class FaultProxy {
  private server?: net.Server;
  private budget = Infinity;
  private healOnReset = false;
  /** Connections clients opened through the proxy. */
  connections = 0;
  /** GETs of a presigned URL (the signature in the query, no Authorization header). */
  presignedGets = 0;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  resets = 0;
  /** Bytes clients sent upstream (request lines, headers and bodies): what an upload cost. */
  bytesUp = 0;
  readonly requests = { get: 0, list: 0, head: 0 };
  /** Every request by method (uploads are PUT/PATCH/POST). */
  readonly methods: Record<string, number> = {};
  /** The path (without the query) of each object GET, and whether it was presigned. */
  readonly gets: { readonly path: string; readonly presigned: boolean }[] = [];

  constructor(
    private readonly upstreamPort: number,
    private readonly tlsOptions?: { readonly key: string; readonly cert: string },
  ) {}

  async start(): Promise<void> {
    const onClient = (client: net.Socket) => {
      this.connections++;
      const upstream = net.connect(this.upstreamPort, '127.0.0.1');
      this.sockets.add(client).add(upstream);
      client.on('data', (d: Buffer) => {
        this.count(d);
        this.bytesUp += d.length;
        upstream.write(d);
      });
      upstream.on('data', (d: Buffer) => {
        this.budget -= d.length;
        if (this.budget < 0) {
          this.resets++;
          if (this.healOnReset) this.heal();
          client.resetAndDestroy();
          upstream.destroy();
          return;
        }
        // Upstream waits while the client is behind: the bytes counted are about the bytes the client
        // has (give or take the sockets' buffers), not what the proxy holds for it.
        if (!client.write(d)) {
          upstream.pause();
          client.once('drain', () => upstream.resume());
        }
      });
      const close = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    };
    this.server = this.tlsOptions
      ? tls.createServer({ key: this.tlsOptions.key, cert: this.tlsOptions.cert }, onClient)
      : net.createServer(onClient);
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server!.address() as net.AddressInfo).port;
  }

  /** Request lines start a chunk in practice (requests here have no bodies we care about). */
  private count(chunk: Buffer): void {
    for (const m of chunk
      .toString('latin1')
      .matchAll(/^(GET|HEAD|PUT|POST|PATCH|DELETE) \S+ HTTP\/1\.1\r$/gm)) {
      this.methods[m[1]] = (this.methods[m[1]] ?? 0) + 1;
    }
    for (const m of chunk.toString('latin1').matchAll(/^(GET|HEAD) (\S+) HTTP\/1\.1\r$/gm)) {
      const presigned = m[1] === 'GET' && /[?&]X-Amz-Signature=/.test(m[2]);
      if (presigned) this.presignedGets++;
      if (m[1] === 'HEAD') this.requests.head++;
      else if (/^\/[^/?]+\/?(\?|$)/.test(m[2])) this.requests.list++;
      else {
        this.requests.get++;
        this.gets.push({ path: decodeURIComponent(m[2].split('?')[0]), presigned });
      }
    }
  }

  /** Reset the one connection that is passing when `bytes` more response bytes have passed, then heal. */
  resetOnceAfter(bytes: number): void {
    this.budget = bytes;
    this.healOnReset = true;
  }

  /** Reset every connection once `bytes` more response bytes have passed (until `heal`). */
  resetAfter(bytes: number): void {
    this.budget = bytes;
  }

  /** Uploads seen so far (PUT, PATCH and POST requests). */
  uploads(): number {
    return (this.methods.PUT ?? 0) + (this.methods.PATCH ?? 0) + (this.methods.POST ?? 0);
  }

  heal(): void {
    this.budget = Infinity;
    this.healOnReset = false;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
