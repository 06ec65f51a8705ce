import {
  createAwsClients,
  describeAwsError,
  mayHaveCredentials,
  sdkDefaultRegion,
  type AwsClientOptions,
  type AwsClients,
} from '../aws';
import { ProblemsError, RuntimeFailure, UserError } from '../errors';
import { SETTINGS_PARAMETER_NAME, templateParameterName } from '../layout';
import {
  mergeSettings,
  requireSettings,
  resolveSettings,
  validateSettings,
  type ResolvedSettings,
  type SettingFlags,
} from '../settings';

/**
 * The AWS side of a submit once connected: the settings, and clients when AWS may be reachable. A
 * dry-run without AWS access still connects: no clients, the settings from flags and environment, and
 * a note saying why.
 */
export interface SubmitConnection {
  readonly region: string | undefined;
  /** Undefined when AWS is not reachable (dry-run only). */
  readonly aws: AwsClients | undefined;
  readonly settings: ResolvedSettings;
  /** Why AWS is not used, for the plan. */
  readonly note: string | undefined;
  readonly dryRun: boolean;
  /** The stack's published job template of that name, or undefined. */
  publishedTemplate(name: string): Promise<string | undefined>;
}

/**
 * A submit's AWS session, opened and closed by the caller (the CLI, a sweep, a local run) and handed
 * to the plan and the submit; a plan never holds it. It connects on the first `connect()` (once), so
 * a plan checks its configs before any setting is read or any client opened.
 */
export interface SubmitSession {
  readonly dryRun: boolean;
  connect(): Promise<SubmitConnection>;
  close(): void;
}

export interface SubmitSessionInput {
  readonly settings: SettingFlags;
  readonly dryRun: boolean;
  readonly env?: NodeJS.ProcessEnv;
  /** Test hook: configure the SDK clients (fault injection). */
  readonly configureClients?: AwsClientOptions['configure'];
}

function awsFailure(what: string, err: unknown): RuntimeFailure {
  return new RuntimeFailure(`Could not ${what}: ${describeAwsError(err)}`, 'AwsFailure', { cause: err });
}

/** Opens nothing yet: the session connects when the plan first asks (after the configs are checked). */
export function openSubmitSession(input: SubmitSessionInput): SubmitSession {
  let connecting: Promise<SubmitConnection & { close(): void }> | undefined;
  return {
    dryRun: input.dryRun,
    connect: () => (connecting ??= connectSubmit(input)),
    close: () =>
      void connecting?.then(
        (c) => c.close(),
        () => undefined,
      ),
  };
}

/** Settings: flags > environment > the stack's parameter; clients when AWS may be reachable. */
async function connectSubmit(input: SubmitSessionInput): Promise<SubmitConnection & { close(): void }> {
  const env = input.env ?? process.env;
  const { dryRun } = input;
  const region = mergeSettings(input.settings, env, undefined).values.region ?? (await sdkDefaultRegion());
  let aws: AwsClients | undefined;
  let note: string | undefined;
  let settings: ResolvedSettings;
  if (!region) {
    if (!dryRun) throw new UserError(`No AWS region. Set AWS_REGION or pass --region.`, 'NoRegion');
    note = 'no region: set AWS_REGION or pass --region';
    settings = mergeSettings(input.settings, env, undefined, note);
  } else {
    if (dryRun && !mayHaveCredentials(env)) note = 'no AWS credentials found';
    // A dry-run probes quickly and never hangs; a submit retries like any AWS tool.
    else
      aws = createAwsClients(
        {
          region,
          ...(dryRun ? { maxAttempts: 2, requestTimeoutMs: 5000 } : {}),
          configure: input.configureClients,
        },
        env,
      );
    try {
      settings = (await resolveSettings(input.settings, env, region, aws?.ssm)).settings;
    } catch (err) {
      aws?.close();
      if (err instanceof UserError) throw err;
      if (!dryRun) throw awsFailure(`read the settings parameter ${SETTINGS_PARAMETER_NAME}`, err);
      note = describeAwsError(err);
      aws = undefined;
      settings = (await resolveSettings(input.settings, env, region, undefined)).settings;
    }
  }
  const problems = validateSettings(settings);
  if (problems.length > 0 || !dryRun) {
    try {
      if (problems.length > 0) throw new ProblemsError('Invalid launcher settings', problems);
      requireSettings(settings);
    } catch (err) {
      aws?.close();
      throw err;
    }
  }
  const clients = aws;
  return {
    region,
    aws: clients,
    settings,
    note,
    dryRun,
    async publishedTemplate(name) {
      if (!clients) return undefined;
      try {
        return await clients.ssm.getParameter(templateParameterName(name));
      } catch (err) {
        if (!dryRun) throw awsFailure(`read the template ${name}`, err);
        return undefined;
      }
    },
    close: () => clients?.close(),
  };
}
