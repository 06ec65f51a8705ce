#!/usr/bin/env node
'use strict';
// One warning, ours, on a Node outside package.json's engines (bin/node-support.js); the AWS SDK's own
// (a multi-line notice on every run on Node 20) would say the same again.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// Node 22.1+ keeps the compiled code of the modules it loads on disk (a per-user folder in the temporary
// directory): a command starts with less work from the second run on. Earlier Nodes have no such call.
require('node:module').enableCompileCache?.();
require('./node-support').warnOnUnsupportedNode();

// `npm ci` builds dist/ (the prepare script): plain JavaScript starts about twice as fast as
// compiling TypeScript on the fly. Any source file newer than the build means an edit since: then
// the TypeScript runs directly (tsx), so the CLI never runs stale code and needs no build step.
const fs = require('node:fs');
const path = require('node:path');
const root = path.join(__dirname, '..');
const built = path.join(root, 'dist', 'bin', 'rlvr.js');

function newestSource(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

let useBuilt = false;
try {
  const builtAt = fs.statSync(built).mtimeMs;
  useBuilt = newestSource(path.join(root, 'lib')) <= builtAt && newestSource(__dirname) <= builtAt;
} catch {
  useBuilt = false;
}
if (useBuilt) {
  require(built);
} else {
  require('tsx/cjs');
  require('./rlvr.ts');
}
