import { describe, expect, it } from 'vitest';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import boundaries from 'eslint-plugin-boundaries';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import { boundariesRule, boundariesSettings } from '../../eslint.boundaries.js';

/**
 * The repository's own layer rules (eslint.boundaries.js) and its cycle rule, without the type-aware rules
 * that need real files. Each rule runs on its own: nothing imports a probe, so a probe is in no cycle, and
 * walking the whole import graph behind it (import-x/no-cycle) would only cost the time.
 */
const linter = (rules: Linter.RulesRecord) =>
  new ESLint({
    cwd: new URL('../..', import.meta.url).pathname,
    overrideConfigFile: true,
    ignore: false,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { boundaries, 'import-x': importX },
        settings: {
          ...boundariesSettings,
          ...importX.flatConfigs.typescript.settings,
          'import/resolver': { typescript: { project: './tsconfig.json' } },
          'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
        },
        rules,
      },
    ],
  });
const eslint = linter({ 'boundaries/dependencies': boundariesRule });
const cycles = linter({ 'import-x/no-cycle': 'error' });

async function rulesFired(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => m.ruleId ?? m.message);
}

describe('import boundaries', () => {
  it.each([
    ['a pure module importing the HTTP layer', 'src/lib/probe.ts', "import { buildApp } from '../api/app';"],
    [
      'the domain importing a route',
      'src/transactions/probe.ts',
      "import { cardRoutes } from '../api/routes/card';",
    ],
    [
      'the domain importing an activity',
      'src/transactions/probe.ts',
      "import { cardActivities } from '../../activities/cards';",
    ],
    [
      'the API importing a workflow',
      'src/api/probe.ts',
      "import { cardPayment } from '../../workflows/card-payment';",
    ],
    ['an activity importing the API', 'activities/probe.ts', "import { buildApp } from '../src/api/app';"],
    [
      'the domain importing a chain adapter',
      'src/transactions/probe.ts',
      "import { startChainWatcher } from '../chain/watcher';",
    ],
    [
      'workflow code importing activity code',
      'workflows/probe.ts',
      "import { cardActivities } from '../activities/cards';",
    ],
    [
      'workflow code importing the database',
      'workflows/probe.ts',
      "import { transactions } from '../src/db/schema/index';",
    ],
    ['the CLI importing the API', 'src/cli/probe.ts', "import { buildApp } from '../api/app';"],
  ])('refuses %s', async (_what, filePath, line) => {
    expect(await rulesFired(filePath, `${line}\nexport const probe = 1;\n`)).toContain(
      'boundaries/dependencies',
    );
  });

  it.each([
    [
      'the API importing the domain',
      'src/api/probe.ts',
      "import { createCardPayment } from '../transactions/card';",
    ],
    [
      'workflow code importing the contracts',
      'workflows/probe.ts',
      "import { failureTypes } from '../src/contracts';",
    ],
    [
      'workflow code importing activity types',
      'workflows/probe.ts',
      "import type { Activities } from '../activities/index';",
    ],
    [
      'an activity importing the domain',
      'activities/probe.ts',
      "import { findTransaction } from '../src/transactions/lookup';",
    ],
  ])('allows %s', async (_what, filePath, line) => {
    expect(await rulesFired(filePath, `${line}\nexport const probe = 1;\n`)).toEqual([]);
  });

  it('refuses an import cycle', async () => {
    const [result] = await cycles.lintFiles(['test/fixtures/cycle/a.ts']);
    expect(result!.messages.map((m) => m.ruleId)).toContain('import-x/no-cycle');
  });
});
