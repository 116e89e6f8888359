// Prints the plain closing line `N passed, N failed, N skipped` that CI reads, after vitest's own report, and
// above it each file that did not pass with the state it ended in: a file whose worker process died (a native
// crash, a signal) leaves no failed test behind, only an unhandled pool error, and CI's log is cut to its tail.
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const unfinished: string[] = [];
    for (const m of testModules) {
      let failedHere = 0;
      let skippedHere = 0;
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failedHere++;
        else skippedHere++;
      }
      // A suite whose beforeAll threw fails with its tests shown as skipped: it counts as one failure.
      for (const suite of m.children.allSuites())
        if (suite.state() === 'failed' && ![...suite.children.allTests()].some((t) => t.result().state === 'failed')) failedHere++;
      // So does a file that failed to load, or whose own beforeAll threw.
      if (m.state() === 'failed' && failedHere === 0) failedHere = 1;
      if (m.state() !== 'passed' && m.state() !== 'skipped')
        unfinished.push(`${m.moduleId.replace(`${process.cwd()}/`, '')}: ${m.state()}, ${failedHere} failed, ${skippedHere} not run`);
      failed += failedHere;
      skipped += skippedHere;
    }
    failed += unhandledErrors.length;
    for (const line of unfinished) process.stdout.write(`\nnot passed: ${line}`);
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
