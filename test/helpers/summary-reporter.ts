import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the output with each failed test (file, name, first lines of its error) and a plain
 * `N passed, N failed, N skipped` line. A CI log is often read from its tail only; vitest's own failure report
 * comes before its per-file list, so without this the tail says that something failed but not what.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const failures: string[] = [];
    for (const module of testModules) {
      for (const error of module.errors()) {
        failures.push(
          `${module.moduleId}: error outside any test: ${firstLines(error.message ?? String(error))}`,
        );
      }
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state === 'passed') passed += 1;
        else if (result.state === 'failed') {
          failed += 1;
          const message = result.errors?.[0]?.message ?? 'no error message';
          failures.push(`${module.moduleId} > ${test.fullName}\n    ${firstLines(message)}`);
        } else skipped += 1;
      }
    }
    if (failures.length > 0) {
      process.stdout.write(`\nFAILED:\n${failures.map((line) => `  ${line}`).join('\n')}\n`);
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}

function firstLines(text: string): string {
  return text.split('\n').slice(0, 6).join('\n    ').slice(0, 1_200);
}
