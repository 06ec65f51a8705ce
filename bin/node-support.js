'use strict';
/*
 * Which Node versions rlvr supports: the package's `engines` range, and nothing else. A Node outside it
 * gets one line on stderr per command (child processes of the command stay quiet), never an exit:
 * the command may still work, but it runs on what nobody tests or patches.
 */
const fs = require('node:fs');
const path = require('node:path');
// The one function needed on every call, not the whole package (half its load time).
const satisfies = require('semver/functions/satisfies');

const WARNED = 'RLVR_NODE_WARNED';

/** The supported range, from package.json's `engines.node`. */
function supportedRange() {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8'));
  return pkg.engines.node;
}

/** The warning for `version` (e.g. '20.20.2'), or undefined when the version is supported. */
function nodeWarning(version, range) {
  if (satisfies(version, range)) return undefined;
  const why =
    require('semver/functions/major')(version) <= 20
      ? "Node 20's end of life was April 2026 (older lines' earlier), and AWS SDK releases from January 2027 need Node 22"
      : 'rlvr is not tested on this release line';
  return (
    `rlvr: Node ${version} is not supported (supported: ${range}): ${why}. The command goes on; ` +
    `install a supported Node, such as the current LTS, to run it as tested.`
  );
}

/** Prints the warning once for this command and its child processes. */
function warnOnUnsupportedNode() {
  if (process.env[WARNED]) return;
  const warning = nodeWarning(process.versions.node, supportedRange());
  if (warning === undefined) return;
  process.env[WARNED] = '1';
  process.stderr.write(`${warning}\n`);
}

module.exports = { nodeWarning, supportedRange, warnOnUnsupportedNode };
