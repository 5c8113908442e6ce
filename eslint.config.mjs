// ESLint: the walls of ARCHITECTURE.md ("Walls") as import rules, so that crossing one fails `npm run lint` (part of
// `npm test`) instead of waiting for a reviewer. Each zone's message names the wall it keeps.
import tseslint from 'typescript-eslint';
import importPlugin from 'eslint-plugin-import';

/** `from` may not be imported by files under `target` (paths from the repository root). */
const walls = [
  {
    target: './runtime',
    from: ['./client', './server', './media'],
    message: 'runtime/ never imports the extension, the server or the webview.',
  },
  {
    target: './runtime/config',
    from: './runtime',
    except: ['./config'],
    message: 'runtime/config imports nothing from the rest of runtime/ (ARCHITECTURE.md, Walls).',
  },
  {
    target: './runtime/engine',
    from: ['./runtime/config', './runtime/rft'],
    message: 'runtime/engine knows nothing of Trinity configs (ARCHITECTURE.md, Walls).',
  },
  {
    target: './runtime/metrics',
    from: './runtime',
    // The safetensors format (Node-only, no tfjs) is what Trinity's TRXP experiences pack their tensors in.
    except: ['./metrics', './engine/weights/safetensors.ts'],
    message:
      'runtime/metrics imports nothing from the rest of runtime/ but the safetensors format (ARCHITECTURE.md, Walls).',
  },
  {
    target: './runtime/rft/run/modes',
    from: [
      './runtime/engine',
      './runtime/rft/algorithm',
      './runtime/rft/data',
      './runtime/rft/explorer',
      './runtime/rft/models',
      './runtime/rft/rewards',
      './runtime/rft/trainer',
      './runtime/rft/workflows',
      './runtime/rft/serve/service.ts',
      './runtime/rft/run/stage/algorithm-setup.ts',
      './runtime/rft/run/stage/load-model.ts',
    ],
    message:
      'a mode module only decides the order of work: models, trainers and explorers are built by run/trainer-side and run/explorer-side (ARCHITECTURE.md, Walls).',
  },
  { target: './server', from: ['./client', './media'], message: 'server/ never imports the extension or the webview.' },
  {
    target: './client',
    from: './runtime',
    except: ['./protocol.ts', './run-records.ts', './metrics', './config/detect.ts', './config/load/yaml-document.ts'],
    message:
      'client/ reaches the runtime only through its process (protocol.ts, run-records.ts) and runtime/metrics, and Trinity logic only through the server (ARCHITECTURE.md, Walls).',
  },
  {
    target: './client',
    from: './server',
    except: ['./lsp-messages.ts'],
    message:
      'client/ talks to the server only through the LSP messages of server/lsp-messages.ts (ARCHITECTURE.md, Walls).',
  },
  ...[{ from: './client', except: ['./dashboard/messages.ts'] }, { from: './server' }, { from: './runtime' }].map(
    (z) => ({
      target: './media',
      ...z,
      message: 'media/ knows only client/dashboard/messages.ts and its own modules (ARCHITECTURE.md, Walls).',
    }),
  ),
];

/** Packages a folder may not import at all (a later entry replaces an earlier one for the files both match). */
const VSCODE = { name: 'vscode', message: 'only client/ may import vscode.' };
const LSP = [
  'vscode-languageserver',
  'vscode-languageserver/node',
  'vscode-languageserver-protocol',
  'vscode-jsonrpc',
].map((name) => ({
  name,
  message: 'the LSP library belongs to server/host (server/service and runtime/ stay transport-free).',
}));
const YAML_PARSE = {
  name: 'yaml',
  importNames: ['parse', 'parseDocument', 'parseAllDocuments'],
  message:
    'parse YAML through runtime/config/load/yaml-document.ts, which refuses nesting that would overflow the stack.',
};
const banned = [
  { files: ['client/**/*.ts'], paths: [YAML_PARSE] },
  { files: ['server/**/*.ts'], paths: [VSCODE, YAML_PARSE] },
  { files: ['runtime/**/*.ts', 'media/**/*.ts', 'server/service/**/*.ts'], paths: [VSCODE, ...LSP, YAML_PARSE] },
  { files: ['runtime/config/load/yaml-document.ts'], paths: [VSCODE, ...LSP] },
];

export default tseslint.config(
  {
    ignores: ['dist/**', 'dist-vsix/**', 'node_modules/**', 'test-results/**', 'bench/results/**', '**/*.generated.ts'],
  },
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser, parserOptions: { sourceType: 'module' } },
    plugins: { import: importPlugin },
    settings: { 'import/resolver': { node: { extensions: ['.ts', '.js', '.mjs', '.json'] } } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: { 'import/no-restricted-paths': ['error', { zones: walls }] },
  },
  ...banned.map(({ files, paths }) => ({ files, rules: { 'no-restricted-imports': ['error', { paths }] } })),
);
