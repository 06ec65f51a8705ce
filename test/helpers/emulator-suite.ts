import type { SubmitInput } from '../../lib/training';
import { bareEnv } from './cli';
import { closeClients, IMAGE, seed, SETTINGS_ENV } from './emulator-data';
import { startMoto, type MotoServer } from './moto';

/**
 * Registers the hooks of a suite that runs against moto: start it on a free port, point the SDK (which
 * reads process.env) at it, reset and seed it before each test, stop it after.
 */
export function useEmulator(options: { trainingSeconds?: number } = {}) {
  let moto: MotoServer | undefined;
  const savedEnv = { ...process.env };
  beforeAll(async () => {
    moto = await startMoto(options);
    Object.assign(process.env, moto.env, SETTINGS_ENV);
  });
  afterAll(async () => {
    closeClients();
    process.env = savedEnv;
    await moto?.stop();
  });
  beforeEach(async () => {
    await moto!.reset();
    await seed(moto!.endpoint);
  });
  return {
    get moto(): MotoServer {
      return moto!;
    },
    /** The environment of a CLI process run against the emulator, with the launcher settings. */
    cliEnv: (extra: Record<string, string> = {}) => bareEnv({ ...moto!.env, ...SETTINGS_ENV, ...extra }),
    /** A real (not dry-run) submit of `configPath` against the emulator. */
    submitInput: (configPath: string, extra: Partial<SubmitInput> = {}): SubmitInput => ({
      configPath,
      options: {},
      settings: {},
      image: IMAGE,
      dryRun: false,
      env: { ...moto!.env, ...SETTINGS_ENV },
      ...extra,
    }),
  };
}
