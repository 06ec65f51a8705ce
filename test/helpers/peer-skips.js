// @ts-check
'use strict';
/**
 * Test peers (moto_server, dockerd, chromium, cfn-lint, …) missing on a developer's machine skip their
 * tests instead of failing them (under CI=true they fail). So that a skip is never mistaken for a
 * pass, each skipped suite is recorded in a file this reporter names for the run, and the run ends
 * with how many suites each missing peer skipped.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** The environment variable the test workers find the record file by (set before they start). */
const ENV = 'RLVR_PEER_SKIPS_FILE';

/** Records one skipped suite (a test worker calls this). */
function recordSkip(peer, what, env = process.env) {
  const file = env[ENV];
  if (file) fs.appendFileSync(file, `${JSON.stringify({ peer, what })}\n`);
}

/** "12 suites skipped because a test peer is missing: moto_server (9), dockerd (3). …" or undefined. */
function skipSummary(lines) {
  const byPeer = new Map();
  for (const line of lines) {
    if (!line.trim()) continue;
    const { peer, what } = JSON.parse(line);
    if (!byPeer.has(peer)) byPeer.set(peer, new Set());
    byPeer.get(peer).add(what);
  }
  if (byPeer.size === 0) return undefined;
  const total = [...byPeer.values()].reduce((n, s) => n + s.size, 0);
  const each = [...byPeer].map(([peer, whats]) => `${peer} (${whats.size})`).join(', ');
  return (
    `${total} suite${total === 1 ? '' : 's'} skipped because a test peer is missing: ${each}. ` +
    'Install them as .ci/run does; under CI=true a missing peer fails the run.'
  );
}

class PeerSkipReporter {
  constructor() {
    this.file = path.join(os.tmpdir(), `rlvr-peer-skips-${process.pid}-${Date.now()}.jsonl`);
    process.env[ENV] = this.file;
  }

  onRunComplete() {
    let text = '';
    try {
      text = fs.readFileSync(this.file, 'utf8');
      fs.rmSync(this.file, { force: true });
    } catch {
      return;
    }
    const summary = skipSummary(text.split('\n'));
    if (summary) process.stderr.write(`\n${summary}\n`);
  }
}

module.exports = PeerSkipReporter;
module.exports.recordSkip = recordSkip;
module.exports.skipSummary = skipSummary;
module.exports.PEER_SKIPS_ENV = ENV;
