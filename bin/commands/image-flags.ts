/** The image flags `rlvr image` and `submit` share, and their checks (before anything is built). */
import type { Command } from 'commander';
import { UserError } from '../../lib/errors';
import { collect } from './common';

export interface ImageFlagValues {
  dockerDir?: string;
  buildArg?: string[];
  dockerHost?: string;
}

/** The image flags `rlvr image` and `submit` share. */
export function addImageOptions(command: Command): Command {
  return command
    .option('--docker-dir <dir>', "folder with the image's Dockerfile (default: this package's docker/)")
    .option(
      '--build-arg <key=value>',
      'Dockerfile build argument, e.g. VLLM_VERSION=0.10.2 (repeatable)',
      collect,
    )
    .option('--docker-host <uri>', 'Docker engine, e.g. unix:///var/run/docker.sock (else DOCKER_HOST)');
}

export function parseBuildArgs(values: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values ?? []) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(v);
    if (!m)
      throw new UserError(
        `--build-arg ${v}: expected KEY=VALUE, e.g. --build-arg VLLM_VERSION=0.10.2`,
        'BadFlag',
      );
    out[m[1]] = m[2];
  }
  return out;
}

/** A tag as the registry's grammar has it: a registry refuses anything else, after the build. */
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** `--also-tag`: each a valid tag, checked before anything is built (exit 2 naming the one that is not). */
export function parseAlsoTags(values: readonly string[] | undefined): string[] {
  for (const t of values ?? [])
    if (!TAG.test(t))
      throw new UserError(
        `--also-tag ${t}: not a tag (letters, digits, _ . - and at most 128 of them, not starting with . or -), e.g. --also-tag git-1a2b3c4`,
        'BadFlag',
      );
  return [...(values ?? [])];
}
