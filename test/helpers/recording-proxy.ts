import { createHash } from 'node:crypto';
import * as http from 'node:http';

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  /** SHA-256 (hex) of the body as it arrived. */
  readonly bodySha256: string;
  readonly bodyBytes: number;
}

/**
 * An HTTP proxy on loopback in front of a real server that records every request — its headers and
 * the SHA-256 of the body that actually went over the wire — and forwards it unchanged.
 */
export class RecordingProxy {
  private server?: http.Server;
  readonly requests: RecordedRequest[] = [];
  port = 0;

  constructor(private readonly upstreamPort: number) {}

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const hash = createHash('sha256');
      let bodyBytes = 0;
      const upstream = http.request(
        {
          host: '127.0.0.1',
          port: this.upstreamPort,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        bodyBytes += chunk.length;
        upstream.write(chunk);
      });
      req.on('end', () => {
        this.requests.push({
          method: req.method ?? '',
          url: req.url ?? '',
          headers: req.headers,
          bodySha256: hash.digest('hex'),
          bodyBytes,
        });
        upstream.end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server!.address() as { port: number }).port;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
