import { Command, CommanderError } from 'commander';
import { registerOperate } from './commands/operate';
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

program.parseAsync(process.argv).catch((err: unknown) => {
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
