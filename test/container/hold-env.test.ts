import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { holdPlatformEnvironment } from '../../lib/container/hold-env';
import { JobFailure } from '../../lib/container/setup';
import { PLATFORM_ENV } from '../../lib/layout';
import { tempDir } from '../helpers/fixtures';
import { describeWithPeer } from '../helpers/moto';
import { pythonAvailable, testVenv } from '../helpers/python';

/** A module in their shape: it assigns NCCL's interface and transport when imported. */
const THEIR_MODULE = [
  'import os',
  'os.environ["NCCL_NET"] = "Socket"',
  'os.environ["NCCL_SOCKET_IFNAME"] = "ens32"',
  'os.environ.setdefault("GLOO_SOCKET_IFNAME", "ens32")',
  'os.environ["MASTER_ADDR"] = "10.1.2.3"',
  '',
].join('\n');

/** Imports the module, then reports what this process and a child process it starts see. */
const DRIVER = [
  'import json, os, subprocess, sys',
  'import their_module',
  'keys = ["NCCL_NET", "NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME", "MASTER_ADDR"]',
  'child = subprocess.run([sys.executable, "-c", "import json, os, their_module; print(json.dumps({k: os.environ.get(k) for k in %r}))" % keys], capture_output=True, text=True, check=True)',
  'print(json.dumps({"self": {k: os.environ.get(k) for k in keys}, "child": json.loads(child.stdout)}))',
].join('\n');

describeWithPeer('python3.11', pythonAvailable())(
  "hold_platform_env: the image's Python start-up hook",
  () => {
    const said: string[] = [];
    const job = { say: (l: string) => said.push(l) };

    function project(): string {
      const dir = tempDir('rlvr-hold-src-');
      fs.writeFileSync(path.join(dir, 'their_module.py'), THEIR_MODULE);
      fs.writeFileSync(path.join(dir, 'driver.py'), DRIVER);
      return dir;
    }
    const run = (env: NodeJS.ProcessEnv, cwd: string) => {
      // PYTHONPATH replaced, as their Runtime does for Ray workers: the hook must not depend on it.
      const r = spawnSync('python', ['driver.py'], {
        env: { ...env, PYTHONPATH: cwd },
        cwd,
        encoding: 'utf8',
      });
      expect(r.status).toBe(0);
      return {
        seen: JSON.parse(r.stdout) as Record<string, Record<string, string | null>>,
        stderr: r.stderr,
      };
    };

    it("keeps the platform's values against a module's assignments at import, in the process and its children, and says where", () => {
      const venv = testVenv();
      const env: NodeJS.ProcessEnv = { PATH: `${venv.bin}:/usr/bin:/bin`, NCCL_SOCKET_IFNAME: 'lo' };
      const held = { NCCL_SOCKET_IFNAME: 'lo', GLOO_SOCKET_IFNAME: 'lo', NCCL_NET: null };
      holdPlatformEnvironment(job, env, held);
      expect(JSON.parse(env[PLATFORM_ENV.holdVariable]!)).toEqual(held);
      expect(fs.readdirSync(venv.sitePackages).filter((f) => f.startsWith('_rlvr_hold'))).toHaveLength(2);
      expect(said.at(-1)).toMatch(
        /hold_platform_env: NCCL_SOCKET_IFNAME=lo, GLOO_SOCKET_IFNAME=lo, NCCL_NET=\(unset\) held/,
      );

      const dir = project();
      const { seen, stderr } = run(env, dir);
      // GLOO_SOCKET_IFNAME was not in the environment given: the hook puts it back at start.
      const expected = {
        NCCL_NET: null,
        NCCL_SOCKET_IFNAME: 'lo',
        GLOO_SOCKET_IFNAME: 'lo',
        MASTER_ADDR: '10.1.2.3',
      };
      expect(seen).toEqual({ self: expected, child: expected });
      expect(stderr).toContain(
        `[rlvr] hold_platform_env: kept NCCL_SOCKET_IFNAME=lo against 'ens32' at ${path.join(dir, 'their_module.py')}:3`,
      );
      expect(stderr).toContain(
        `kept NCCL_NET=(unset) against 'Socket' at ${path.join(dir, 'their_module.py')}:2`,
      );

      // Without the job's variable the hook does nothing: the module's values win, as before.
      const plain = { ...env };
      delete plain[PLATFORM_ENV.holdVariable];
      const unheld = run(plain, dir);
      expect(unheld.seen.self).toEqual({
        NCCL_NET: 'Socket',
        NCCL_SOCKET_IFNAME: 'ens32',
        GLOO_SOCKET_IFNAME: 'ens32',
        MASTER_ADDR: '10.1.2.3',
      });
      expect(unheld.stderr).toBe('');
    });

    it('holds against the other ways to the environment (os.environb, os.putenv, clear, popitem) and leaves everything else as Python has it', () => {
      const venv = testVenv();
      const env: NodeJS.ProcessEnv = { PATH: `${venv.bin}:/usr/bin:/bin` };
      holdPlatformEnvironment(job, env, { NCCL_SOCKET_IFNAME: 'lo', NCCL_NET: null });
      const script = [
        'import ctypes, json, os',
        'libc = ctypes.CDLL(None); libc.getenv.restype = ctypes.c_char_p',
        'c = lambda k: (libc.getenv(k.encode()) or b"").decode() or None',
        'os.environb[b"NCCL_SOCKET_IFNAME"] = b"ens32"',
        'os.putenv("NCCL_SOCKET_IFNAME", "ens33")',
        'os.putenv("NCCL_NET", "Socket")',
        'os.environ["OTHER"] = "x"',
        'seen = {"c": c("NCCL_SOCKET_IFNAME"), "net": c("NCCL_NET"), "py": os.environ.get("NCCL_SOCKET_IFNAME")}',
        'os.environ.clear()',
        'seen["after_clear"] = sorted(os.environ)',
        'try:',
        '    os.environ.popitem(); seen["popitem"] = "popped"',
        'except KeyError:',
        '    seen["popitem"] = "KeyError"',
        'try:',
        '    os.environ["NCCL_SOCKET_IFNAME"] = 5',
        'except TypeError:',
        '    seen["non_string"] = "TypeError"',
        'print(json.dumps(seen))',
      ].join('\n');
      const r = spawnSync('python', ['-c', script], { env, encoding: 'utf8', timeout: 20_000 });
      expect(r.status).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({
        c: 'lo',
        net: null,
        py: 'lo',
        after_clear: ['NCCL_SOCKET_IFNAME'],
        popitem: 'KeyError',
        non_string: 'TypeError',
      });
      expect(r.stderr).toContain("kept NCCL_SOCKET_IFNAME=lo against b'ens32' at <string>:4");
      expect(r.stderr).toContain("kept NCCL_SOCKET_IFNAME=lo against os.putenv('ens33') at <string>:5");
    });

    it('fails the job when there is no Python to hold the variables in', () => {
      const env: NodeJS.ProcessEnv = { PATH: tempDir('rlvr-empty-path-') };
      expect(() => holdPlatformEnvironment(job, env, { NCCL_SOCKET_IFNAME: 'eth0' })).toThrow(JobFailure);
      expect(() => holdPlatformEnvironment(job, env, { NCCL_SOCKET_IFNAME: 'eth0' })).toThrow(
        /no Python interpreter \(python, python3\)/,
      );
    });
  },
);
