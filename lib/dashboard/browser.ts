import { spawn } from 'node:child_process';

/** Opens a URL in the desktop's browser; failed() is given the line to show when no opener starts. */
export function openInBrowser(url: string, failed: (line: string) => void): void {
  const opener =
    process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  const line = `could not start ${opener}; open ${url} yourself\n`;
  try {
    const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
    child.on('error', () => failed(line));
    child.unref();
  } catch {
    failed(line);
  }
}
