/**
 * A job that holds the platform's values (hold_platform_env): the trainer's modules may assign NCCL's
 * interface or transport when imported, in the trainer, the eval watcher and every Ray worker on every
 * host, long after our entrypoint set them. Each Python environment of the image gets a start-up hook: a
 * `.pth` file in its site-packages, which Python's `site` runs in every process of that interpreter
 * (whatever PYTHONPATH says: their Runtime replaces it for Ray workers). With PLATFORM_ENV.holdVariable
 * set, the hook puts the held values back at start and refuses any later write of them to os.environ,
 * saying where it came from; without it the hook does nothing. It is installed at the job's start, not
 * in the image, so any image of ours can hold and a job that does not ask changes nothing.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CONTAINER, PLATFORM_ENV } from '../layout';
import { JobFailure, type ContainerJob } from './setup';

const HOOK_MODULE = '_rlvr_hold_platform_env';

/** The hook, as Python runs it from the `.pth` file's `import` line. */
export const HOLD_HOOK_SOURCE = `"""The rlvr job's start-up hook: keeps the platform's values of the variables named in
${PLATFORM_ENV.holdVariable} (a JSON map; null: unset) against any write to the environment in this process."""
import os as _os


def _install():
    import json
    import sys

    spec = _os.environ.get(${JSON.stringify(PLATFORM_ENV.holdVariable)})
    if not spec:
        return
    try:
        loaded = json.loads(spec)
    except ValueError:
        sys.stderr.write("[rlvr] hold_platform_env: %s is not JSON: nothing held\\n" % ${JSON.stringify(PLATFORM_ENV.holdVariable)})
        return
    if not isinstance(loaded, dict):
        return
    held = {k: v for k, v in loaded.items() if isinstance(k, str) and (v is None or isinstance(v, str))}
    held_bytes = {k.encode(): (None if v is None else v.encode()) for k, v in held.items()}
    environ, environb = _os.environ, getattr(_os, "environb", None)
    environ_type = type(environ)
    original_set = environ_type.__setitem__
    original_del = environ_type.__delitem__
    original_putenv, original_unsetenv = _os.putenv, getattr(_os, "unsetenv", None)
    said = set()

    def caller():
        try:
            frame = sys._getframe(3)
        except ValueError:
            return "?"
        # setdefault, update, pop and clear reach us through the mapping's own methods: name their caller.
        while frame is not None and ("_collections_abc" in frame.f_code.co_filename or frame.f_code.co_filename.endswith(("os.py", "<frozen os>"))):
            frame = frame.f_back
        return "%s:%d" % (frame.f_code.co_filename, frame.f_lineno) if frame is not None else "?"

    def say(key, attempted):
        where = caller()
        if (key, where) in said:
            return
        said.add((key, where))
        kept = "(unset)" if held[key] is None else held[key]
        sys.stderr.write("[rlvr] hold_platform_env: kept %s=%s against %s at %s\\n" % (key, kept, attempted, where))

    def held_key(self, key):
        """The held name of key in this mapping (os.environ: str keys, os.environb: bytes keys), or None."""
        if self is environ and isinstance(key, str) and key in held:
            return key
        if self is environb and isinstance(key, bytes) and key in held_bytes:
            return key.decode()
        return None

    def __setitem__(self, key, value):
        name = held_key(self, key)
        wanted = None if name is None else (held[name] if self is environ else held_bytes[name.encode()])
        if name is not None and isinstance(value, (str, bytes)) and value != wanted:
            say(name, repr(value))
            return
        original_set(self, key, value)

    def __delitem__(self, key):
        name = held_key(self, key)
        if name is not None and held[name] is not None:
            say(name, "its removal")
            return
        original_del(self, key)

    def clear(self):
        for key in list(self):
            name = held_key(self, key)
            if name is None or held[name] is None:
                original_del(self, key)

    def popitem(self):
        for key in list(self):
            name = held_key(self, key)
            if name is None or held[name] is None:
                value = self[key]
                original_del(self, key)
                return key, value
        raise KeyError("popitem(): only held variables are left")

    def putenv(key, value):
        name = key if isinstance(key, str) else key.decode() if isinstance(key, bytes) else None
        if name in held:
            said_value = value if isinstance(value, str) else repr(value)
            if (held[name] or "") != said_value:
                say(name, "os.putenv(%r)" % (value,))
                return
        original_putenv(key, value)

    def unsetenv(key):
        name = key if isinstance(key, str) else key.decode() if isinstance(key, bytes) else None
        if name in held and held[name] is not None:
            say(name, "os.unsetenv")
            return
        original_unsetenv(key)

    for key, value in held.items():
        if value is None:
            if key in environ:
                original_del(environ, key)
        elif environ.get(key) != value:
            original_set(environ, key, value)
    environ_type.__setitem__ = __setitem__
    environ_type.__delitem__ = __delitem__
    environ_type.clear = clear
    environ_type.popitem = popitem
    _os.putenv = putenv
    if original_unsetenv is not None:
        _os.unsetenv = unsetenv


_install()
`;

/** The interpreters the job's processes run: `python` and `python3` on its PATH, and OLMES's venv. */
function interpreters(): string[] {
  return ['python', 'python3', ...(fs.existsSync(CONTAINER.olmesPython) ? [CONTAINER.olmesPython] : [])];
}

/** The first site-packages folder of `python`, or undefined when there is no such interpreter. */
function sitePackages(python: string, env: NodeJS.ProcessEnv): string | undefined {
  const r = spawnSync(python, ['-c', 'import json, site; print(json.dumps(site.getsitepackages()))'], {
    env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (r.status !== 0) return undefined;
  try {
    const dirs = JSON.parse(r.stdout.trim().split('\n').pop() ?? '[]') as unknown;
    return Array.isArray(dirs) ? dirs.map(String).find((d) => fs.existsSync(d)) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Installs the hook into each Python environment of the image, sets the held values for every process
 * the entrypoint starts (`env`, changed in place), and proves it: a new process that assigns each held
 * variable must still see the held value. A job that asked to hold and cannot fails here, before any
 * GPU work.
 */
export function holdPlatformEnvironment(
  job: Pick<ContainerJob, 'say'>,
  env: NodeJS.ProcessEnv,
  held: Readonly<Record<string, string | null>>,
): void {
  if (Object.keys(held).length === 0) {
    job.say(
      'hold_platform_env: nothing to hold (resourceconfig.json names no interface and the host has no EFA)',
    );
    return;
  }
  env[PLATFORM_ENV.holdVariable] = JSON.stringify(held);
  const installed = new Map<string, string>();
  for (const python of interpreters()) {
    const site = sitePackages(python, env);
    if (!site || [...installed.values()].includes(site)) continue;
    try {
      fs.writeFileSync(path.join(site, `${HOOK_MODULE}.py`), HOLD_HOOK_SOURCE);
      fs.writeFileSync(path.join(site, `${HOOK_MODULE}.pth`), `import ${HOOK_MODULE}\n`);
    } catch (err) {
      throw new JobFailure(
        `hold_platform_env: cannot install the start-up hook into ${site} (${python}): ${(err as Error).message}`,
      );
    }
    installed.set(python, site);
  }
  if (installed.size === 0)
    throw new JobFailure(
      "hold_platform_env: no Python interpreter (python, python3) on the job's PATH to hold the variables in",
    );
  const probe = Object.keys(held)
    .map((k) => `os.environ[${JSON.stringify(k)}] = "rlvr-probe"`)
    .join('; ');
  for (const [python, site] of installed) {
    const r = spawnSync(
      python,
      [
        '-c',
        `import json, os; ${probe}; print(json.dumps({k: os.environ.get(k) for k in ${JSON.stringify(Object.keys(held))}}))`,
      ],
      { env, encoding: 'utf8', timeout: 30_000 },
    );
    let seen: Record<string, string | null> | undefined;
    try {
      seen = JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as Record<string, string | null>;
    } catch {
      seen = undefined;
    }
    const lost = Object.keys(held).filter((k) => (seen?.[k] ?? null) !== held[k]);
    if (!seen || lost.length > 0)
      throw new JobFailure(
        `hold_platform_env: the start-up hook in ${site} does not hold ${lost.join(', ') || 'the variables'} (${python}: ${(r.stderr || r.stdout || '').trim().slice(-300) || `exit ${r.status}`})`,
      );
  }
  const shown = Object.entries(held)
    .map(([k, v]) => `${k}=${v ?? '(unset)'}`)
    .join(', ');
  job.say(
    `hold_platform_env: ${shown} held in every process of ${[...installed.keys()].join(', ')} (${[...new Set(installed.values())].join(', ')})`,
  );
}
