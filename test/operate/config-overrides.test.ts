import { parse } from 'yaml';
import { UserError } from '../../lib/errors';
import { overrideLiteral, parseSetFlag } from '../../lib/operate';
import { applyOverrides } from '../../lib/operate/config-overrides';

const CONFIG = `# the config the trainer reads
run:
  name: gsm8k
  seed: 42 # fixed for the baseline
training:
  lr: 1.0e-6
  max_steps: 200
  checkpoint_interval: 20
roles:
  - name: trainer
    config:
      model: /opt/ml/input/data/model
      temperature: 1.0
tags: {a: 1}
`;

const apply = (...sets: string[]) =>
  applyOverrides(
    CONFIG,
    sets.map((f) => parseSetFlag(f)),
  );

function refusal(...sets: string[]): string {
  try {
    apply(...sets);
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    return (err as Error).message;
  }
  throw new Error(`${sets.join(' ')} was not refused`);
}

describe('rerun --set: edits that must stay the config they claim', () => {
  const BLOCK =
    'data:\n  system_prompt: |-\n    Think step by step.\n    Then answer.\n  seed: 1\nrun:\n  name: r\n';

  it('a block scalar is replaced with its line break kept: the file still parses, the key after it intact', () => {
    const { text } = applyOverrides(BLOCK, [parseSetFlag('data.system_prompt=Be brief.')]);
    expect(parse(text)).toEqual({ data: { system_prompt: 'Be brief.', seed: 1 }, run: { name: 'r' } });
  });

  it('strings PyYAML would read as something else are quoted: yes, off, 1_000, 1:30, a date', () => {
    for (const v of ['yes', 'off', 'On', '1_000', '1:30', '2024-01-01']) {
      const { text } = applyOverrides(BLOCK, [parseSetFlag(`run.name="${v}"`)]);
      expect(text).toContain(`name: ${JSON.stringify(v)}`);
      expect(parse(text).run.name).toBe(v);
    }
    expect(applyOverrides(BLOCK, [parseSetFlag('run.name=gsm8k-seed7')]).text).toContain(
      'name: gsm8k-seed7\n',
    );
  });

  it('--add adds a new key a --set would take for a misspelling; an existing key is refused', () => {
    const config = 'sampling:\n  top_p: 0.95\n';
    expect(() => applyOverrides(config, [parseSetFlag('sampling.top_k=50')])).toThrow(
      /likely misspelling of "top_p".*If "top_k" is a new key, add it with --add sampling\.top_k=…/,
    );
    const { text, changes } = applyOverrides(config, [parseSetFlag('sampling.top_k=50', { adds: true })]);
    expect(parse(text)).toEqual({ sampling: { top_p: 0.95, top_k: 50 } });
    expect(changes).toEqual([{ key: 'sampling.top_k', before: undefined, after: 50 }]);
    expect(() => applyOverrides(config, [parseSetFlag('sampling.top_p=0.9', { adds: true })])).toThrow(
      /--add sampling\.top_p: the config already has "sampling\.top_p"; change it with --set/,
    );
  });
});

describe('rerun --set', () => {
  it('parses key=value with the value as a YAML scalar', () => {
    expect(parseSetFlag('run.seed=7')).toEqual({ key: 'run.seed', path: ['run', 'seed'], value: 7 });
    expect(parseSetFlag('a.b=true').value).toBe(true);
    expect(parseSetFlag('a.b=1e-6').value).toBe(1e-6);
    expect(parseSetFlag('a.b=hello world').value).toBe('hello world');
    expect(parseSetFlag('a.b="7"').value).toBe('7');
    expect(parseSetFlag('a.b=').value).toBeNull();
    expect(parseSetFlag('a.b=x=y').value).toBe('x=y');
    expect(parseSetFlag('roles.0.name=x').path).toEqual(['roles', 0, 'name']);
    for (const bad of ['run.seed', '=7', 'a..b=1', 'a.b=[1, 2]', 'a.b={x: 1}'])
      expect(() => parseSetFlag(bad)).toThrow(UserError);
  });

  it('keeps an integer beyond 2^53 exact, as PyYAML reads it (a float does not become one)', () => {
    const { text, changes } = apply('run.seed=9007199254740993');
    expect(text).toContain('seed: 9007199254740993 #');
    expect(changes).toEqual([{ key: 'run.seed', before: 42, after: 9007199254740993n }]);
    expect(parseSetFlag('run.seed=-123456789012345678901234567890').value).toBe(
      -123456789012345678901234567890n,
    );
    expect(parseSetFlag('run.seed=9007199254740991').value).toBe(9007199254740991);
    expect(parseSetFlag('run.seed=1e300').value).toBe(1e300);
  });

  it('writes a value with line breaks double-quoted on one line, which YAML and PyYAML read back alike', () => {
    const { text } = apply('run.name="line one\\nline two: x"');
    expect(text).toContain('name: "line one\\nline two: x"\n');
    expect(parse(text).run.name).toBe('line one\nline two: x');
    expect(overrideLiteral('[not a list')).toBe('"[not a list"');
  });

  it('says when a value changes its key’s type, unless the text is meant (quoted, --set-string)', () => {
    const config = 'training:\n  abort_in_flight: false\n  seed: 3\n  tag: x\n';
    const change = (flag: string, asString = false) =>
      applyOverrides(config, [parseSetFlag(flag, { asString })]).changes[0].typeChange;
    expect(change('training.abort_in_flight=yes')).toMatch(
      /has a boolean there \(false\) and this makes it a string \("yes"\)/,
    );
    expect(change('training.seed=2024-01-01')).toMatch(/has a number there \(3\) and this makes it a string/);
    expect(change('training.tag=true')).toMatch(
      /has a string there \("x"\) and this makes it a boolean \(true\); quote the value/,
    );
    expect(change('training.abort_in_flight="yes"')).toBeUndefined();
    expect(change('training.abort_in_flight=yes', true)).toBeUndefined();
    expect(change('training.abort_in_flight=true')).toBeUndefined();
    expect(change('training.seed=4.5')).toBeUndefined();
    expect(parseSetFlag('training.seed=007', { asString: true })).toEqual({
      key: 'training.seed',
      path: ['training', 'seed'],
      value: '007',
      text: true,
    });
  });

  it('changes exactly the named value, leaving every other line as it was', () => {
    const { text, changes } = apply('run.seed=7');
    expect(changes).toEqual([{ key: 'run.seed', before: 42, after: 7 }]);
    expect(text).toBe(CONFIG.replace('seed: 42 #', 'seed: 7 #'));
  });

  it('writes floats in the form PyYAML reads as floats, and keeps the others as written', () => {
    const { text } = apply('training.lr=1e-7', 'roles.0.config.temperature=0.7');
    expect(text).toContain('lr: 1.0e-7\n');
    expect(text).toContain('temperature: 0.7\n');
    expect(parse(text).training.lr).toBe(1e-7);
    expect(overrideLiteral('007')).toBe('"007"');
    expect(overrideLiteral('plain')).toBe('plain');
  });

  it('adds a new leaf under an existing mapping, shown as absent before', () => {
    const { text, changes } = apply('training.warmup_steps=10', 'roles.0.config.top_p=0.9');
    expect(changes).toEqual([
      { key: 'training.warmup_steps', before: undefined, after: 10 },
      { key: 'roles.0.config.top_p', before: undefined, after: 0.9 },
    ]);
    const parsed = parse(text);
    expect(parsed.training).toEqual({ lr: 1e-6, max_steps: 200, checkpoint_interval: 20, warmup_steps: 10 });
    expect(parsed.roles[0].config.top_p).toBe(0.9);
    // Everything that was there is there, byte for byte.
    expect(text.replace('  warmup_steps: 10\n', '').replace('      top_p: 0.9\n', '')).toBe(CONFIG);
  });

  it('refuses a likely misspelling of a key beside it, and a parent that is not there', () => {
    expect(refusal('training.checkpoint_intervall=10')).toMatch(
      /likely misspelling of "checkpoint_interval".*--set training\.checkpoint_interval=/,
    );
    expect(refusal('trainig.lr=1')).toMatch(/no "trainig" to set "lr" in/);
    expect(refusal('run.seed.x=1')).toMatch(/"run\.seed" is a single value/);
    expect(refusal('roles.3.name=x')).toMatch(/no "roles\.3" to set "name"/);
    expect(refusal('roles.3=x')).toMatch(/a list of 1; set one of its items by index/);
  });

  it('refuses a path inside the job, a mapping, and adding to an inline mapping', () => {
    expect(refusal('roles.0.config.model=/tmp/other')).toMatch(
      /names a path inside the job \(\/opt\/ml\/…\).*submit the config instead/,
    );
    expect(refusal('training.max_steps=/opt/ml/x')).toMatch(/names a path inside the job/);
    expect(refusal('training=1')).toMatch(/is a mapping in the config/);
    expect(refusal('tags.other=2')).toMatch(/written inline/);
  });
});
