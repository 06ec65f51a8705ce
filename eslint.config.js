// @ts-check
const js = require('@eslint/js');
const tseslint = require('typescript-eslint');

/** Strings only lib/layout may spell (an esquery regex: container paths, the default root prefix, our env names). */
const LAYOUT_STRING = String.raw`/\/opt\/ml|rlvr-experiments\/|RLVR_/`;
const LAYOUT_MESSAGE = 'Spell container paths, S3 prefixes and RLVR_ names in lib/layout (import them).';
const LAYOUT_SELECTORS = [
  { selector: `Literal[value=${LAYOUT_STRING}]`, message: LAYOUT_MESSAGE },
  { selector: `TemplateElement[value.raw=${LAYOUT_STRING}]`, message: LAYOUT_MESSAGE },
  // The same names as `env.RLVR_X` or `{ RLVR_X: … }`.
  {
    selector: 'MemberExpression[computed=false] > Identifier.property[name=/^RLVR_/]',
    message: LAYOUT_MESSAGE,
  },
  { selector: 'Property[computed=false] > Identifier.key[name=/^RLVR_/]', message: LAYOUT_MESSAGE },
];

const FACE_MESSAGE =
  'Import the folder (its index.ts is its face), not one of its files; export what you need from the face.';

module.exports = tseslint.config(
  { ignores: ['node_modules/', 'coverage/', 'cdk.out/', 'dist/', 'results/', 'test-output/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        __dirname: 'readonly',
        console: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  // Only the CLI entry points print; the library reports through listeners.
  { files: ['bin/**', 'scripts/**', 'test/**'], rules: { 'no-console': 'off' } },
  // lib/layout is the one module that spells container paths, S3 prefixes and RLVR_ variable names:
  // everything else imports them (tests and docs are exempt). String literals, template literal parts
  // and `env.RLVR_X` / `{ RLVR_X: … }` names are checked; comments may mention them.
  { files: ['bin/**/*.ts'], rules: { 'no-restricted-syntax': ['error', ...LAYOUT_SELECTORS] } },
  // The library also never writes to the process's output nor installs signal handlers: it takes
  // streams, listeners and an AbortSignal from its caller (bin/, or the container's main.ts).
  {
    files: ['lib/**/*.ts'],
    ignores: ['lib/layout/**', 'lib/container/main.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...LAYOUT_SELECTORS,
        {
          selector: "MemberExpression[object.name='process'][property.name=/^(stdout|stderr)$/]",
          message:
            "The library never writes to the process's output: take a stream or a listener from the caller.",
        },
        {
          selector:
            "CallExpression[callee.object.name='process'][callee.property.name=/^(on|once|addListener)$/]",
          message: 'Signal handlers belong to the CLI (bin/) or lib/container/main.ts: take an AbortSignal.',
        },
      ],
    },
  },
  // Every lib folder is entered through its face (index.ts): from outside a folder, import the folder,
  // never one of its files. Tests may reach inside.
  {
    files: ['lib/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: String.raw`^\./[^/]+/.`, message: FACE_MESSAGE }] },
      ],
    },
  },
  {
    files: ['lib/*/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: String.raw`^\.\./[^./][^/]*/.`, message: FACE_MESSAGE }] },
      ],
    },
  },
  {
    files: ['lib/*/*/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: String.raw`^\.\./\.\./[^./][^/]*/.`, message: FACE_MESSAGE }] },
      ],
    },
  },
  {
    files: ['bin/**/*.ts', 'bench/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: String.raw`^(\.\./)*lib/[^/]+/.`, message: FACE_MESSAGE }] },
      ],
    },
  },
  // The team's trainer repository, described as it is: its own RLVR_TITAN_CONFIG_DIR and its
  // /efs/rlvr-experiments/results fallback are its names, not our layout.
  { files: ['lib/trainers/rlvr-experiments.ts'], rules: { 'no-restricted-syntax': 'off' } },
);
