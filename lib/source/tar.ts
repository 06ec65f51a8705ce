import { pack } from 'tar-stream';

export interface TarEntry {
  /** Relative, `/`-separated. */
  readonly path: string;
  readonly body?: Buffer;
  readonly executable?: boolean;
  readonly symlinkTarget?: string;
}

/**
 * A reproducible tar: same entries → same bytes. Entries are written in the given order with fixed
 * mtime, owner and modes (0644, 0755 when executable, 0777 for symlinks).
 */
export async function reproducibleTar(entries: readonly TarEntry[]): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (c: unknown) => chunks.push(c as Buffer));
  const finished = new Promise<void>((resolve, reject) => {
    tar.on('end', resolve);
    tar.on('error', reject);
  });
  const fixed = { mtime: new Date(0), uid: 0, gid: 0, uname: '', gname: '' };
  for (const e of entries) {
    if (e.symlinkTarget !== undefined) {
      tar.entry({ ...fixed, name: e.path, type: 'symlink', linkname: e.symlinkTarget, mode: 0o777 });
    } else {
      tar.entry(
        { ...fixed, name: e.path, type: 'file', mode: e.executable ? 0o755 : 0o644 },
        e.body ?? Buffer.alloc(0),
      );
    }
  }
  tar.finalize();
  await finished;
  return Buffer.concat(chunks);
}

/** Byte-wise order, the same on every platform and locale. */
export function compareBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
