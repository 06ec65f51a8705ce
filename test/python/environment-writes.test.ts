import { environmentWrites } from '../../lib/python';

const at = (text: string) =>
  environmentWrites('m.py', text).map((w) => ({
    line: w.line,
    variable: w.variable,
    kind: w.kind,
    value: w.value,
    atImport: w.atImport,
  }));

describe('writes to the process environment, read from Python source', () => {
  it('finds assignments, defaults and removals in every form, with the value when it is a literal', () => {
    const text = [
      'import os',
      'os.environ["NCCL_NET"] = "Socket"',
      "os.environ['NCCL_SOCKET_IFNAME'] = 'ens32'  # their cluster",
      'os.environ["NCCL_NET_PLUGIN"] = ""',
      'os.environ["NCCL_DEBUG"] = os.environ.get("NCCL_DEBUG", "WARN")',
      'os.environ.setdefault("NCCL_TIMEOUT", "90")',
      'os.environ["GLOO_SOCKET_IFNAME"] = IFACE',
      'os.environ.update({"FI_PROVIDER": "tcp", "X": "1"})',
      'os.environ.update(MASTER_ADDR="10.0.0.1", MASTER_PORT=port)',
      'os.putenv("CUDA_VISIBLE_DEVICES", "7")',
      'del os.environ["HF_HUB_OFFLINE"]',
      'os.environ.pop("TRANSFORMERS_OFFLINE", None)',
      'if os.environ["NCCL_X"] == "1": pass',
    ].join('\n');
    expect(at(text)).toEqual([
      { line: 2, variable: 'NCCL_NET', kind: 'assign', value: 'Socket', atImport: true },
      { line: 3, variable: 'NCCL_SOCKET_IFNAME', kind: 'assign', value: 'ens32', atImport: true },
      { line: 4, variable: 'NCCL_NET_PLUGIN', kind: 'assign', value: '', atImport: true },
      { line: 5, variable: 'NCCL_DEBUG', kind: 'default', value: undefined, atImport: true },
      { line: 6, variable: 'NCCL_TIMEOUT', kind: 'default', value: '90', atImport: true },
      { line: 7, variable: 'GLOO_SOCKET_IFNAME', kind: 'assign', value: undefined, atImport: true },
      { line: 8, variable: 'FI_PROVIDER', kind: 'assign', value: 'tcp', atImport: true },
      { line: 8, variable: 'X', kind: 'assign', value: '1', atImport: true },
      { line: 9, variable: 'MASTER_ADDR', kind: 'assign', value: '10.0.0.1', atImport: true },
      { line: 9, variable: 'MASTER_PORT', kind: 'assign', value: undefined, atImport: true },
      { line: 10, variable: 'CUDA_VISIBLE_DEVICES', kind: 'assign', value: '7', atImport: true },
      { line: 11, variable: 'HF_HUB_OFFLINE', kind: 'unset', value: undefined, atImport: true },
      { line: 12, variable: 'TRANSFORMERS_OFFLINE', kind: 'unset', value: undefined, atImport: true },
    ]);
    expect(environmentWrites('m.py', text)[1].column).toBe(1);
  });

  it('tells writes in a function body (run when called) from those at import, class bodies and multi-line signatures included', () => {
    const text = [
      'import os',
      'class TitanModelRank:',
      '    os.environ["A"] = "class body: at import"',
      '    def __init__(',
      '        self,',
      '        master_addr: str,',
      '    ) -> None:',
      '        os.environ["MASTER_ADDR"] = master_addr',
      '',
      '    async def go(self):',
      '        if True:',
      '            os.environ["B"] = "in a method"',
      'if __name__ == "__main__":',
      '    os.environ["C"] = "a module-level block"',
      'def f(): pass',
      'os.environ["D"] = "after a one-line def"',
    ].join('\n');
    expect(at(text).map((w) => [w.variable, w.atImport])).toEqual([
      ['A', true],
      ['MASTER_ADDR', false],
      ['B', false],
      ['C', true],
      ['D', true],
    ]);
  });

  it('passes over comments, docstrings and keys it cannot read', () => {
    const text = [
      '"""Module doc.',
      'os.environ["IN_DOC"] = "x"',
      '"""',
      '# os.environ["COMMENTED"] = "x"',
      'key = "K"',
      'os.environ[key] = "computed key"',
      'print("#", os.environ["HASH"])',
      'os.environ["AFTER"] = "a#b"  # a comment',
    ].join('\n');
    expect(at(text)).toEqual([{ line: 8, variable: 'AFTER', kind: 'assign', value: 'a#b', atImport: true }]);
  });

  it('reads statements as Python does: across brackets and backslashes, after `;` and `:`, through aliases, chained, with f-strings', () => {
    const text = [
      'import os as _os, sys',
      'from os import environ as E',
      'os = None  # not the module any more, but _os is',
      '_os.environ.update({',
      '    "NCCL_SOCKET_IFNAME": "ens32",',
      '})',
      'E["GLOO_SOCKET_IFNAME"] = \\',
      '    "ens33"',
      'x = 1; _os.environ["NCCL_NET"] = "Socket"',
      'if True: del _os.environ["FI_PROVIDER"]',
      '_os.environ.__setitem__("NCCL_IB_DISABLE", "1")',
      '_os.environ |= {"NCCL_NET_PLUGIN": ""}',
      'E["A"] = E["B"] = f"same"',
      'E["C"] = (',
      '    "wrapped"',
      ')',
      'SEP = \'"""\'',
      'E["D"] = "after a triple quote inside a string"',
    ].join('\n');
    expect(at(text).map((w) => [w.line, w.variable, w.kind, w.value])).toEqual([
      [4, 'NCCL_SOCKET_IFNAME', 'assign', 'ens32'],
      [7, 'GLOO_SOCKET_IFNAME', 'assign', 'ens33'],
      [9, 'NCCL_NET', 'assign', 'Socket'],
      [10, 'FI_PROVIDER', 'unset', undefined],
      [11, 'NCCL_IB_DISABLE', 'assign', '1'],
      [12, 'NCCL_NET_PLUGIN', 'assign', ''],
      [13, 'A', 'assign', 'same'],
      [13, 'B', 'assign', 'same'],
      [14, 'C', 'assign', 'wrapped'],
      [18, 'D', 'assign', 'after a triple quote inside a string'],
    ]);
  });

  it('knows what does not run at import: function bodies (continued lines too), lambdas, the main guard, strings, other dicts', () => {
    const text = [
      'import os',
      'environ = {}',
      'environ["NOT_OS"] = "a dict of its own"',
      'print(\'os.environ["IN_A_STRING"] = "x"\')',
      'f = lambda: os.environ.update(IN_LAMBDA="1")',
      'def g():',
      '    x = 1 + \\',
      '2',
      '    os.environ["IN_DEF"] = "still in g"',
      'if __name__ == "__main__":',
      '    os.environ["IN_MAIN"] = "only as the script"',
      'os.environ["AT_IMPORT"] = "yes"',
    ].join('\n');
    const writes = environmentWrites('m.py', text);
    expect(writes.map((w) => [w.variable, w.atImport, w.inMain])).toEqual([
      ['IN_LAMBDA', false, false],
      ['IN_DEF', false, false],
      ['IN_MAIN', true, true],
      ['AT_IMPORT', true, false],
    ]);
  });

  it('stays linear on a hostile line (no backtracking on long runs of spaces)', () => {
    const line = `os.environ.setdefault("K", x${' '.repeat(200_000)}y`;
    const started = process.hrtime.bigint();
    environmentWrites('m.py', `import os\n${line}\n${'('.repeat(100_000)}\n`);
    // A backtracking pattern takes minutes here; the scan takes milliseconds.
    expect(Number(process.hrtime.bigint() - started) / 1e9).toBeLessThan(5);
  });
});
