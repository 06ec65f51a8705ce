import { Command, CommanderError } from 'commander';
import { registerOperate } from './commands/operate';
import { registerImage } from './commands/image';
import { registerResults } from './commands/results';
import { registerSubmit } from './commands/submit';
import { reportError } from './output';

const program = new Command()
  .name('rlvr')
  .description('Launch and manage RLVR fine-tuning jobs on Amazon SageMaker')
  .showSuggestionAfterError(true)
  .exitOverride()
  .configureOutput({ outputError: (text, write) => write(text) });

registerSubmit(program);
registerOperate(program);
registerResults(program);
registerImage(program);

// A command whose last awaited operation can never settle would otherwise end silently with exit 0.
let settled = false;
process.once('beforeExit', () => {
  if (settled) return;
  process.stderr.write(
    'error: the command ended before it finished (a connection was left unanswered); rerun with --debug\n',
  );
  process.exitCode = 1;
});

program
  .parseAsync(process.argv)
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
