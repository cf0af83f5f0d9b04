// A Vitest reporter that writes a run's unhandled errors (an exception or a rejection outside any test's
// own code) beside its JSON report, as `unhandled.json`: Vitest's exit code cannot be trusted for them
// (scripts/vitest-report.mjs) and the JSON report does not count them, so `npm test` and `npm run test:file`
// read this file too. Vitest reports them as "Errors: N errors" and says they may hide failures.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export default class UnhandledErrorsReporter {
  onInit(vitest) {
    const json = vitest.config.outputFile?.json;
    this.file = json ? join(dirname(json), 'unhandled.json') : undefined;
  }

  onTestRunEnd(_testModules, unhandledErrors) {
    if (!this.file) return;
    const errors = unhandledErrors.map((error) => ({
      name: error.name,
      message: String(error.message ?? error).slice(0, 500),
    }));
    writeFileSync(this.file, JSON.stringify(errors));
  }
}
