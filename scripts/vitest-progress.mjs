// A Vitest reporter that keeps `<finished files> <all files>` in the file PAYMENTS_TEST_PROGRESS names, so
// `npm test` (scripts/test.mjs) can start the fault suite and the cluster test as the main suite's last
// files leave a core idle.
import { writeFileSync } from 'node:fs';

export default class ProgressReporter {
  total = 0;
  finished = 0;

  onTestRunStart(specifications) {
    this.total = specifications.length;
    this.write();
  }

  onTestModuleEnd() {
    this.finished += 1;
    this.write();
  }

  write() {
    const file = process.env.PAYMENTS_TEST_PROGRESS;
    if (file) writeFileSync(file, `${this.finished} ${this.total}`);
  }
}
