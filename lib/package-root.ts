import * as fs from 'node:fs';
import * as path from 'node:path';

let cached: string | undefined;

/** This package's folder, from the TypeScript sources and from dist/ alike. */
export function packageRoot(): string {
  if (cached) return cached;
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest) && JSON.parse(fs.readFileSync(manifest, 'utf8')).name === 'rlvr-infra') {
      return (cached = dir);
    }
    if (path.dirname(dir) === dir) throw new Error(`rlvr-infra's package.json not found above ${__dirname}`);
  }
}
