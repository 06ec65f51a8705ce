import * as fs from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';
import { packageRoot } from '../package-root';

/*
 * The page: web/main.ts and uPlot (from the npm package, so no CDN: it works offline), bundled by esbuild
 * once per process. The server serves it as /app.js and /app.css; the report inlines both and its data.
 */

export interface WebAssets {
  readonly js: string;
  readonly css: string;
}

let cached: Promise<WebAssets> | undefined;

export function webAssets(): Promise<WebAssets> {
  cached ??= (async () => {
    const root = packageRoot();
    const out = await build({
      entryPoints: [path.join(root, 'lib/dashboard/web/main.ts')],
      bundle: true,
      write: false,
      minify: true,
      format: 'iife',
      target: 'es2020',
      platform: 'browser',
      logLevel: 'silent',
    });
    const uplotCss = fs.readFileSync(path.join(root, 'node_modules/uplot/dist/uPlot.min.css'), 'utf8');
    const ownCss = fs.readFileSync(path.join(root, 'lib/dashboard/web/style.css'), 'utf8');
    return { js: out.outputFiles[0].text, css: `${uplotCss}\n${ownCss}` };
  })();
  return cached;
}

/** `</script` inside inlined code would end the script element, `<!--` change how it is parsed. */
function scriptSafe(text: string): string {
  return text.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** Data as JSON no trace text can break out of: every `<` written as `\u003c` (still the same JSON). */
function jsonInHtml(data: unknown): string {
  return JSON.stringify(data).replace(/</g, '\\u003c');
}

/** An attribute value: the characters that could end it or start markup, as entities. */
function attr(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The HTML shell: linked assets for the server (their URLs carry `token`, when the server requires one:
 * the browser fetches them without the page's Bearer header); assets and data inline for a report.
 */
export function pageHtml(o: {
  inline: { assets: WebAssets; data: unknown; title: string } | undefined;
  token?: string;
}): string {
  const q = o.token ? attr(`?token=${encodeURIComponent(o.token)}`) : '';
  // the empty icon: otherwise the browser asks for /favicon.ico, without the token
  const head = o.inline
    ? `<title>${o.inline.title.replace(/[<&>"]/g, '')}</title><style>${o.inline.assets.css}</style>`
    : `<title>rlvr dashboard</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/app.css${q}">`;
  const body = o.inline
    ? `<script id="rlvr-data" type="application/json">${jsonInHtml(o.inline.data)}</script><script>${scriptSafe(o.inline.assets.js)}</script>`
    : `<script src="/app.js${q}"></script>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${head}</head><body><div id="app"></div>${body}</body></html>\n`;
}
