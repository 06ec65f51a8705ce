import { timingSafeEqual } from 'node:crypto';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLoopbackHost } from '../util';
import { DashboardData, HttpError } from './data';
import { pageHtml, webAssets, type WebAssets } from './web-bundle';

/** The requests a browser makes by URL alone (no Authorization header): the token may be in their URL. */
const URL_TOKEN_PATHS = new Set(['/', '/app.js', '/app.css', '/api/events']);

/*
 * The dashboard's HTTP server. Safe by default: it binds 127.0.0.1 and answers only requests whose Host
 * is a loopback name (127.0.0.1, the address it bound, localhost, [::1]) on its port, so a web page
 * elsewhere cannot reach it through DNS rebinding. Any address in 127.0.0.0/8 or ::1 is loopback; on any
 * other --host it requires --token, and every request must carry it (a Bearer header, or `token=` in
 * the query: the page's first load, its script and style, and its event stream), under any Host name.
 * Routes are fixed: no URL is mapped to a path, run ids are folder names checked against the results
 * folder (runs.ts). The only write, a run's notes, takes same-origin requests only (Origin must be the
 * Host the request came to).
 */

export interface ServerOptions {
  readonly data: DashboardData;
  readonly host?: string;
  readonly port?: number;
  readonly token?: string;
  /** The jobs view (jobs.ts), refreshed by the caller. */
  readonly jobs: () => Promise<unknown>;
}

export interface DashboardServer {
  readonly url: string;
  readonly port: number;
  readonly host: string;
  /** Tells open pages that a run's trace grew, or that the jobs changed. */
  notify(event: 'run' | 'jobs', id?: string): void;
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, body: string | Buffer, type: string): void {
  res.writeHead(status, {
    'content-type': type,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'content-security-policy':
      "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
  });
  res.end(body);
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  send(res, status, JSON.stringify(body), 'application/json; charset=utf-8');
}

function tokenMatches(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

async function readBody(req: http.IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, `body over ${limit} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** What answering a request needs: the options, the page's assets, the open event streams, our names. */
interface Answering {
  readonly o: ServerOptions;
  readonly assets: WebAssets;
  readonly clients: Set<http.ServerResponse>;
  /** The Host values a request without a token may carry (known once the port is). */
  allowedHosts(): Set<string>;
}

/** A run's notes, written: from this dashboard's own page only (same origin). */
async function writeNotes(d: DashboardData, q: URLSearchParams, req: http.IncomingMessage): Promise<unknown> {
  if (req.method !== 'PUT') throw new HttpError(405, 'notes: PUT only');
  // same origin: the page this server sent, under the name the request reached it by
  if (req.headers.origin !== `http://${req.headers.host}`)
    throw new HttpError(403, 'notes are written from this dashboard only (same origin)');
  if (req.headers['sec-fetch-site'] && req.headers['sec-fetch-site'] !== 'same-origin')
    throw new HttpError(403, 'notes are written from this dashboard only (same origin)');
  const text = await readBody(req, 1_000_000);
  return d.writeNotes(q.get('id') ?? '', text);
}

/** Opens an event stream: the page hears of grown traces and changed jobs until it goes. */
function openEvents(a: Answering, req: http.IncomingMessage, res: http.ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-store',
    connection: 'keep-alive',
  });
  res.write(': connected\n\n');
  a.clients.add(res);
  req.on('close', () => a.clients.delete(res));
}

async function answerApi(
  a: Answering,
  url: URL,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const q = url.searchParams;
  const d = a.o.data;
  switch (url.pathname) {
    case '/api/jobs':
      return sendJson(res, 200, await a.o.jobs());
    case '/api/run':
      return sendJson(res, 200, await d.run(q.get('id') ?? ''));
    case '/api/series':
      return sendJson(res, 200, await d.series(q));
    case '/api/timeline':
      return sendJson(res, 200, await d.timeline(q));
    case '/api/breakdown':
      return sendJson(res, 200, await d.breakdown(q));
    case '/api/samples':
      return sendJson(res, 200, await d.samples(q));
    case '/api/compare':
      return sendJson(res, 200, await d.compare(q));
    case '/api/passk':
      return sendJson(res, 200, await d.passk());
    case '/api/notes':
      return sendJson(res, 200, await writeNotes(d, q, req));
    case '/api/events':
      return openEvents(a, req, res);
    default:
      throw new HttpError(404, `no such endpoint: ${url.pathname}`);
  }
}

/** The request's URL, once its Host, token and method are ones this server answers; else an HttpError. */
function admit(a: Answering, req: http.IncomingMessage): URL {
  const token = a.o.token;
  // Without a token, only our own loopback names (DNS rebinding); with one, the machine is reached by
  // whatever name the network gives it, and the token is what lets a request in.
  if (!token && !a.allowedHosts().has(req.headers.host ?? ''))
    throw new HttpError(421, 'wrong Host for this server');
  const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
  if (token) {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    // A token in the URL only where the browser cannot send a header: the page, its script and
    // style, and the event stream; the API's other answers (notes can be written) need the header.
    const inUrl =
      req.method === 'GET' && URL_TOKEN_PATHS.has(url.pathname) ? url.searchParams.get('token') : null;
    if (!tokenMatches(bearer ?? inUrl ?? undefined, token))
      throw new HttpError(401, 'a token is required: open the URL the dashboard printed');
  }
  if (req.method !== 'GET' && req.method !== 'HEAD' && url.pathname !== '/api/notes')
    throw new HttpError(405, `${req.method} is not allowed`);
  return url;
}

async function answer(a: Answering, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = admit(a, req);
  if (url.pathname.startsWith('/api/')) return answerApi(a, url, req, res);
  switch (url.pathname) {
    case '/':
      // the script and style are asked for by the browser, which sends no Bearer header: their URLs
      // carry the token the page was opened with, so a protected page is not left blank
      return send(res, 200, pageHtml({ inline: undefined, token: a.o.token }), 'text/html; charset=utf-8');
    case '/app.js':
      return send(res, 200, a.assets.js, 'text/javascript; charset=utf-8');
    case '/app.css':
      return send(res, 200, a.assets.css, 'text/css; charset=utf-8');
    case '/favicon.ico':
      res.writeHead(204).end();
      return;
    default:
      throw new HttpError(404, 'not found');
  }
}

export async function startServer(o: ServerOptions): Promise<DashboardServer> {
  const host = o.host ?? '127.0.0.1';
  const loopback = isLoopbackHost(host);
  if (!loopback && !o.token)
    throw new Error(`--host ${host} is reachable from other machines: give --token too`);
  const assets: WebAssets = await webAssets();
  const clients = new Set<http.ServerResponse>();
  let port = 0;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const a: Answering = {
    o,
    assets,
    clients,
    allowedHosts: () =>
      new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${urlHost}:${port}`]),
  };

  const server = http.createServer((req, res) => {
    answer(a, req, res).catch((e: unknown) => {
      const status = e instanceof HttpError ? e.status : 500;
      if (!res.headersSent) sendJson(res, status, { error: (e as Error).message });
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const heartbeat = setInterval(() => {
    for (const c of clients) c.write(': keep-alive\n\n');
  }, 15_000);
  heartbeat.unref();
  return {
    url: `http://${urlHost}:${port}/${o.token ? `?token=${encodeURIComponent(o.token)}` : ''}`,
    port,
    host,
    notify(event, id) {
      const line = `event: ${event}\ndata: ${JSON.stringify({ id: id ?? null })}\n\n`;
      for (const c of clients) c.write(line);
    },
    async close() {
      clearInterval(heartbeat);
      for (const c of clients) c.end();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
