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
});
