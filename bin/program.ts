import { Command, type Option } from 'commander';
import { UserError } from '../lib/errors';

export type Register = (program: Command) => void;

/*
 * Each command's module is loaded only when it runs (help and unknown commands load them all):
 * the modules behind submit (config schemas, zod, yaml, the image pipeline) cost ~100 ms that
 * `download` or `status` should not pay at every start. `require`, not `import()`: when bin/rlvr.js
 * runs the TypeScript sources (tsx's require hook), a dynamic import would bypass the hook.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- lazy, synchronous loads (see above) */
export const COMMANDS: Record<string, () => Register> = {
  submit: () => (require('./commands/submit') as typeof import('./commands/submit')).registerSubmit,
  jobs: () => (require('./commands/jobs') as typeof import('./commands/jobs')).registerJobs,
  status: () => (require('./commands/status') as typeof import('./commands/status')).registerStatus,
  logs: () => (require('./commands/logs') as typeof import('./commands/logs')).registerLogs,
  stop: () => (require('./commands/stop') as typeof import('./commands/stop')).registerStop,
  rerun: () => (require('./commands/rerun') as typeof import('./commands/rerun')).registerRerun,
  diff: () => (require('./commands/diff') as typeof import('./commands/diff')).registerDiff,
  doctor: () => (require('./commands/doctor') as typeof import('./commands/doctor')).registerDoctor,
  download: () => (require('./commands/download') as typeof import('./commands/download')).registerDownload,
  'sync-traces': () =>
    (require('./commands/sync-traces') as typeof import('./commands/sync-traces')).registerSyncTraces,
  upload: () => (require('./commands/upload') as typeof import('./commands/upload')).registerUpload,
  image: () => (require('./commands/image') as typeof import('./commands/image')).registerImage,
  lint: () => (require('./commands/lint') as typeof import('./commands/lint')).registerLint,
  eval: () => (require('./commands/eval') as typeof import('./commands/eval')).registerEval,
  passk: () => (require('./commands/passk') as typeof import('./commands/passk')).registerPassk,
  curriculum: () =>
    (require('./commands/curriculum') as typeof import('./commands/curriculum')).registerCurriculum,
  dashboard: () =>
    (require('./commands/dashboard') as typeof import('./commands/dashboard')).registerDashboard,
  report: () => (require('./commands/dashboard') as typeof import('./commands/dashboard')).registerReport,
};
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * The CLI with the named commands registered (all of them when none is named), and the check of
 * option values below run before any command's action.
 */
export function createProgram(
  args: readonly string[],
  names: readonly string[] = Object.keys(COMMANDS),
): Command {
  const program = new Command()
    .name('rlvr')
    .description('Launch and manage RLVR fine-tuning jobs on Amazon SageMaker')
    .showSuggestionAfterError(true)
    // A command's options are its own: a parent's (`eval --dry-run`) are not its subcommands' (`eval results`).
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text) });
  for (const name of names) COMMANDS[name]()(program);
  program.hook('preAction', (_program, action) => checkOptionValues(args, action));
  return program;
}

/** The commands that run an action (`image build`, not `image`), each with its words. */
export function leafCommands(program: Command): { path: string[]; command: Command }[] {
  const walk = (command: Command, at: string[]): { path: string[]; command: Command }[] =>
    command.commands.length === 0
      ? [{ path: at, command }]
      : command.commands.flatMap((c) => walk(c, [...at, c.name()]));
  return program.commands.flatMap((c) => walk(c, [c.name()]));
}

/** An option's spellings on the command line: `--image`, `-h`. */
function spellings(option: Option): string[] {
  return [option.long, option.short].filter((s): s is string => Boolean(s));
}

/**
 * Every option `command` takes: its own (positional options: a parent's options go before the
 * subcommand, so they are not this command's), and help.
 */
export function optionsOf(command: Command): Option[] {
  return [...command.options];
}

/**
 * A value-taking option followed by another option of the command (`--image --dry-run`: the value was
 * forgotten) is bad input. commander would take `--dry-run` as the image and the submit would go ahead
 * without being a dry run. A value given as `--image=--dry-run` is explicit and stays allowed.
 */
export function checkOptionValues(args: readonly string[], command: Command): void {
  const options = optionsOf(command);
  const byName = new Map<string, Option>();
  for (const o of options) for (const s of spellings(o)) byName.set(s, o);
  const isOption = (token: string) =>
    byName.has(token) || token === '--help' || token === '-h' || byName.has(token.split('=')[0]);
  for (let i = 0; i < args.length; i++) {
    const token = args[i];
    if (token === '--') return;
    const option = byName.get(token);
    const next = args[i + 1];
    if (!option?.required) {
      // An optional value is taken only when it does not look like an option.
      if (option?.optional && next !== undefined && !next.startsWith('-')) i++;
      continue;
    }
    if (next !== undefined && isOption(next)) {
      const value = option.flags.replace(/^.*?([<[].*[>\]])$/, '$1');
      throw new UserError(
        `${token} needs a value: "${next}" is another option of ${commandPath(command)}. ` +
          `Write ${token} ${value}, or ${token}=${next} if "${next}" is the value.`,
        'BadFlag',
      );
    }
    i++; // its value
  }
}

function commandPath(command: Command): string {
  const words: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) words.unshift(c.name());
  return words.join(' ');
}
