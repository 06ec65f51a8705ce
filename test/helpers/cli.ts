import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from './fixtures';

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** An environment with nothing AWS in it: a fresh machine. */
export function bareEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: '/nonexistent-home',
    AWS_EC2_METADATA_DISABLED: 'true',
    // Set by test/setup.ts: the unsupported-Node warning has its own test.
    ...(process.env.RLVR_NODE_WARNED ? { RLVR_NODE_WARNED: process.env.RLVR_NODE_WARNED } : {}),
    ...extra,
  };
}

/** Runs the real CLI (`bin/rlvr.js`) as a user would, in its own process. */
export function runCli(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<CliResult> {
  return runCommand(process.execPath, [path.join(REPO_ROOT, 'bin', 'rlvr.js'), ...args], options);
}

export function runCommand(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? REPO_ROOT, env: options.env ?? bareEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
