// Which folder may import which: the layers of docs/architecture.md, enforced on every lint.
// api, cli -> adapters (src/chain) -> domain -> (temporal client, base, lib, contracts); worker -> activities
// -> adapters, domain; workflows
// -> contracts and lib only (activities as types); the process roots wire everything together.

/** [element type, path patterns relative to the repository root]; the first match wins. */
export const layers = [
  ['lib', ['src/lib']],
  ['contracts', ['src/contracts']],
  // What the API takes and answers, as zod schemas: the routes, the domain and the typed client share them.
  ['schemas', ['src/schemas']],
  ['base', ['src/platform', 'src/ciphers', 'src/db', 'src/net', 'src/webhooks']],
  ['temporal', ['src/temporal']],
  ['client', ['src/client']],
  [
    'domain',
    ['src/transactions', 'src/merchants', 'src/wallets', 'src/coins', 'src/sandbox', 'src/reconciliation'],
  ],
  // The chain adapters: nodes, the watcher, transfers. Above the domain, which never imports them.
  // Test deposits (test mode's faucets and deposits on the local chains) build on the chain adapters.
  ['adapters', ['src/chain', 'src/test-deposits']],
  ['api', ['src/api']],
  ['cli', ['src/cli']],
  ['process', ['src/process', 'src/dev']],
  ['activities', ['activities']],
  ['workflows', ['workflows']],
  ['tools', ['scripts', 'bench', 'bin', 'test', 'packages']],
];

/** Everything the API, the CLI and the activities stand on. */
const BELOW_THE_EDGE = ['adapters', 'domain', 'temporal', 'base', 'lib', 'contracts', 'schemas'];

/** Element type -> the element types it may import (its own type always included). */
export const allowed = {
  lib: [],
  contracts: ['lib'],
  schemas: ['lib'],
  base: ['lib', 'contracts', 'schemas'],
  temporal: ['base', 'lib', 'contracts', 'schemas'],
  // The merchant's typed client: the envelope and webhook signatures, nothing of the service.
  client: ['base', 'lib', 'schemas'],
  domain: ['temporal', 'base', 'lib', 'contracts', 'schemas'],
  adapters: ['domain', 'temporal', 'base', 'lib', 'contracts', 'schemas'],
  api: BELOW_THE_EDGE,
  cli: BELOW_THE_EDGE,
  activities: BELOW_THE_EDGE,
  workflows: ['lib', 'contracts'],
  // The process roots wire every layer but the merchant's client together; scripts and tests see it all.
  process: ['api', 'cli', 'activities', 'workflows', ...BELOW_THE_EDGE],
  tools: ['client', 'process', 'api', 'cli', 'activities', 'workflows', ...BELOW_THE_EDGE],
};

export const boundariesSettings = {
  'boundaries/elements': layers.flatMap(([type, patterns]) =>
    patterns.map((pattern) => ({ type, pattern, partialMatch: false })),
  ),
  // Configuration files at the top level belong to no layer.
  'boundaries/include': [
    'src/**',
    'workflows/**',
    'activities/**',
    'scripts/**',
    'bench/**',
    'bin/**',
    'test/**',
    'packages/**',
  ],
};

export const boundariesRule = [
  'error',
  {
    default: 'disallow',
    policies: [
      ...Object.entries(allowed).map(([from, to]) => ({
        from: { element: { type: from } },
        allow: { to: { element: { types: { anyOf: [from, ...to] } } } },
      })),
      // Workflows see activities only as types (the proxies' signatures), never their code.
      {
        from: { element: { type: 'workflows' } },
        allow: { to: { element: { type: 'activities' } }, dependency: { kind: 'type' } },
      },
    ],
  },
];
