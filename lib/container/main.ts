/** The image's `train` command (docker/train runs this file, bundled as /opt/rlvr/entrypoint.js). */
import { runEntrypoint } from './entrypoint';

// SIGTERM (stop, spot) and SIGINT reach the entrypoint as an AbortSignal.
const stop = new AbortController();
for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => stop.abort());

runEntrypoint({ signal: stop.signal, out: process.stdout }).then(
  (code) => {
    process.exitCode = code;
    // Ray's daemons and other detached helpers must not keep the container alive.
    setImmediate(() => process.exit(code));
  },
  (err: unknown) => {
    process.stderr.write(`[rlvr] entrypoint crashed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
