#!/usr/bin/env node
'use strict';
/*
 * The second half of `npm run build`: replaces dist/lib/aws/sdk.js, which tsc compiles to plain
 * re-exports of four AWS SDK packages, with one esbuild bundle of the same names (lib/aws/sdk.ts says
 * why). Without this step the CLI still works, loading the packages themselves.
 */
const path = require('node:path');

/** Bundles lib/aws/sdk.ts into `outfile`; returns its size in bytes. */
function bundleSdk(outfile) {
  const esbuild = require('esbuild');
  const result = esbuild.buildSync({
    entryPoints: [path.join(__dirname, '..', 'lib', 'aws', 'sdk.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'cjs',
    // The packages' ES modules, which esbuild tree-shakes to the commands sdk.ts names (their CommonJS
    // builds are one file per package, every command included).
    mainFields: ['module', 'main'],
    // The SDK loads node:http and node:https with `import()`: kept as such, Node builds an ES module
    // facade of the builtin, whose every export is read (node:http's WebSocket getter loads undici,
    // 27 ms). As `require` it is the same module without the facade.
    supported: { 'dynamic-import': false },
    metafile: true,
    logLevel: 'warning',
  });
  return result.metafile.outputs[path.relative(process.cwd(), outfile)]?.bytes ?? 0;
}

module.exports = { bundleSdk };

if (require.main === module) {
  bundleSdk(path.join(__dirname, '..', 'dist', 'lib', 'aws', 'sdk.js'));
}
