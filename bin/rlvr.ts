import { Command, CommanderError } from 'commander';
import { reportError } from './output';

type Register = (program: Command) => void;

/*
 * Each command module is loaded only when its command runs (help and unknown commands load them all):
 * the modules behind submit (config schemas, zod, yaml, the image pipeline) cost ~100 ms that
 * `download` or `status` should not pay at every start. `require`, not `import()`: when bin/rlvr.js
 * runs the TypeScript sources (tsx's require hook), a dynamic import would bypass the hook.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- lazy, synchronous loads (see above) */
const MODULES: Record<string, () => Register> = {
  submit: () => (require('./commands/submit') as typeof import('./commands/submit')).registerSubmit,
  operate: () => (require('./commands/operate') as typeof import('./commands/operate')).registerOperate,
  results: () => (require('./commands/results') as typeof import('./commands/results')).registerResults,
  image: () => (require('./commands/image') as typeof import('./commands/image')).registerImage,
  lint: () => (require('./commands/lint') as typeof import('./commands/lint')).registerLint,
};
/* eslint-enable @typescript-eslint/no-require-imports */
const OWNERS: Record<string, string> = {
  submit: 'submit',
  jobs: 'operate',
  status: 'operate',
  logs: 'operate',
  stop: 'operate',
  doctor: 'operate',
  download: 'results',
  'sync-traces': 'results',
  upload: 'results',
  image: 'image',
  lint: 'lint',
};

const program = new Command()
  .name('rlvr')
  .description('Launch and manage RLVR fine-tuning jobs on Amazon SageMaker')
  .showSuggestionAfterError(true)
  .exitOverride()
  .configureOutput({ outputError: (text, write) => write(text) });

const first = process.argv[2] ?? '';
const named = Object.hasOwn(OWNERS, first) ? OWNERS[first] : undefined;

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
    for (const m of named ? [named] : Object.keys(MODULES)) MODULES[m]()(program);
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
