import type { CrashTestReport } from './crash-test.js';

/** Thrown by `assertCrashSafe`: its message lists every difference a crash made. */
export class CrashTestError extends Error {
  override readonly name = 'CrashTestError';

  constructor(readonly report: CrashTestReport) {
    super(formatCrashTestReport(report));
  }
}

/** The report as text: each crash point with what it found, then every difference. */
export function formatCrashTestReport(report: CrashTestReport): string {
  const lines = [
    report.ok
      ? `crash test: no difference at ${report.crashes.length} crash points`
      : `crash test: ${report.differences.length} differences from the run without faults`,
  ];
  for (const crash of report.crashes) {
    const found = crash.differences.length === 0 ? 'same' : `${crash.differences.length} differences`;
    lines.push(`  ${crash.crashAt}: ${crash.reached ? 'killed' : 'not reached'}, ${found}`);
  }
  for (const difference of report.differences) {
    lines.push(`- at ${difference.crashAt}, ${difference.kind}: ${difference.detail}`);
  }
  return lines.join('\n');
}

/** Throws a CrashTestError listing every difference unless the report is ok: for any test runner. */
export function assertCrashSafe(report: CrashTestReport): void {
  if (!report.ok) throw new CrashTestError(report);
}
