import { Command, CommanderError } from 'commander';
import { reportError } from './output';

type Register = (program: Command) => void;

/*
 * Each command's module is loaded only when it runs (help and unknown commands load them all):
 * the modules behind submit (config schemas, zod, yaml, the image pipeline) cost ~100 ms that
 * `download` or `status` should not pay at every start. `require`, not `import()`: when bin/rlvr.js
 * runs the TypeScript sources (tsx's require hook), a dynamic import would bypass the hook.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- lazy, synchronous loads (see above) */
const COMMANDS: Record<string, () => Register> = {
  submit: () => (require('./commands/submit') as typeof import('./commands/submit')).registerSubmit,
  jobs: () => (require('./commands/jobs') as typeof import('./commands/jobs')).registerJobs,
  status: () => (require('./commands/status') as typeof import('./commands/status')).registerStatus,
  logs: () => (require('./commands/logs') as typeof import('./commands/logs')).registerLogs,
  stop: () => (require('./commands/stop') as typeof import('./commands/stop')).registerStop,
  doctor: () => (require('./commands/doctor') as typeof import('./commands/doctor')).registerDoctor,
  download: () => (require('./commands/download') as typeof import('./commands/download')).registerDownload,
  'sync-traces': () =>
    (require('./commands/sync-traces') as typeof import('./commands/sync-traces')).registerSyncTraces,
  upload: () => (require('./commands/upload') as typeof import('./commands/upload')).registerUpload,
  image: () => (require('./commands/image') as typeof import('./commands/image')).registerImage,
  lint: () => (require('./commands/lint') as typeof import('./commands/lint')).registerLint,
};
/* eslint-enable @typescript-eslint/no-require-imports */

const program = new Command()
  .name('rlvr')
  .description('Launch and manage RLVR fine-tuning jobs on Amazon SageMaker')
  .showSuggestionAfterError(true)
  .exitOverride()
  .configureOutput({ outputError: (text, write) => write(text) });

const first = process.argv[2] ?? '';
const named = Object.hasOwn(COMMANDS, first) ? first : undefined;

// A command whose last awaited operation can never settle would otherwise end silently with exit 0.
let settled = false;
process.once('beforeExit', () => {
  if (settled) return;
  process.stderr.write(
    'error: the command ended before it finished (a connection was left unanswered); rerun with --debug\n',
  );
  process.exitCode = 1;
});

Promise.resolve()
  .then(() => {
    for (const name of named ? [named] : Object.keys(COMMANDS)) COMMANDS[name]()(program);
    return program.parseAsync(process.argv);
  })
  .then(() => {
    settled = true;
  })
  .catch((err: unknown) => {
    settled = true;
    if (err instanceof CommanderError) {
      // Help and version exit 0; a wrong flag or missing argument is bad input.
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    process.exitCode = reportError(err, {
      debug: process.argv.includes('--debug'),
      json: process.argv.includes('--json'),
    });
  });
