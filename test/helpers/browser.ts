import * as fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/*
 * Debian's Chromium driven by playwright-core (the machine's browser; playwright's own download
 * cannot run here). The flags keep it off the network: without them it tries Google's hosts at start.
 */

export const CHROMIUM = process.env.RLVR_CHROMIUM ?? '/usr/bin/chromium';

export function chromiumAvailable(): boolean {
  return fs.existsSync(CHROMIUM);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** What the page exposes for tests and the benchmark (web/main.ts `probe`). */
export interface PageProbe {
  view: string;
  charts: { id: string; series: number; points: number }[];
  /** The seconds the timeline shows. */
  timeline: { from: number; to: number } | undefined;
  readyMs: number;
  updates: number;
}
