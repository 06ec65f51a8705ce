/**
 * The one progress protocol of every long operation (build, push, transfer, submit, watch, local
 * run): the library reports events to a listener the caller hands in and never prints; the CLI has one
 * reporter for all of them (bin/reporter.ts: a live line on a terminal, plain lines otherwise, JSON
 * lines with --json).
 */
export type ProgressEvent =
  /** A phase begins ("building image", "checking inputs"). */
  | { readonly type: 'step'; readonly message: string }
  /** Something worth knowing that is not a phase (a skipped checkpoint, a resumed transfer). */
  | { readonly type: 'note'; readonly message: string }
  /** A finding the run goes ahead with (a plan warning). */
  | { readonly type: 'warning'; readonly message: string }
  /** A call is retried after a transient failure. */
  | { readonly type: 'retry'; readonly message: string }
  /** One file moved (or was already in place) between here and S3. */
  | {
      readonly type: 'file';
      readonly key: string;
      readonly bytes: number;
      readonly skipped: boolean;
      readonly resumed?: boolean;
    }
  /** Bytes moved so far of a transfer's total. */
  | { readonly type: 'progress'; readonly bytes: number; readonly totalBytes: number }
  /** One image build step finished. */
  | { readonly type: 'build-step'; readonly name: string; readonly cached: boolean }
  /** One image layer pushed, or already in the registry. */
  | {
      readonly type: 'layer';
      readonly id: string;
      readonly status: 'pushed' | 'exists';
      readonly bytes: number;
    }
  /** One log line of a running job. */
  | { readonly type: 'line'; readonly timestamp: number; readonly host: string; readonly message: string }
  /** Waiting for something outside our control (the job's first log line). */
  | { readonly type: 'waiting'; readonly message: string }
  /** The job's status changed. */
  | {
      readonly type: 'status';
      readonly status: string;
      readonly secondary: string;
      readonly message: string;
      readonly time: Date;
    }
  /** A local run's container started. */
  | {
      readonly type: 'started';
      readonly name: string;
      readonly image: string;
      readonly binds: readonly { readonly what: string; readonly host: string }[];
      readonly runDir: string;
      readonly gpus: number;
      /** A multi-host rehearsal: one container per host on the job's own network. */
      readonly hosts?: { readonly names: readonly string[]; readonly network: string };
    }
  /** A local run is being stopped (Ctrl-C): SIGTERM now, SIGKILL after the grace. */
  | { readonly type: 'stopping'; readonly graceSeconds: number }
  /** A local run's container could not run to its end. */
  | { readonly type: 'failed'; readonly reason: string };

export type ProgressListener = (event: ProgressEvent) => void;

/** The events of one kind of operation, for signatures that emit only those. */
export type ProgressOf<T extends ProgressEvent['type']> = Extract<ProgressEvent, { type: T }>;
