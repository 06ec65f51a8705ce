import { CommanderError } from 'commander';
import { reportError } from './output';
import { COMMANDS, createProgram } from './program';

const first = process.argv[2] ?? '';
const named = Object.hasOwn(COMMANDS, first) ? [first] : undefined;

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
    // Help and unknown commands load every command; a known one only its own module.
    return createProgram(process.argv.slice(2), named).parseAsync(process.argv);
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
