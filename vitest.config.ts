import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Three files at a time on a 2-core machine: most integration files wait (on lock expiry, a killed
    // worker's takeover, a browser, a child process starting), so a third fills the idle time; their waits
    // are conditions with generous limits, not stopwatches, so the extra load slows them without failing them.
    // Four saved under a minute (671 s against 724 s) but overloaded the browser tests past their 30 s waits.
    maxWorkers: 3,
    // An error thrown outside any test (an unhandled rejection) is printed whole here, where a CI log keeps it
    // (vitest's own report of it named no test), and still fails the run.
    onUnhandledError(error) {
      const { name, message, stack, ...rest } = error as Error & Record<string, unknown>;
      process.stdout.write(
        `\nUNHANDLED ERROR: ${name}: ${message}\n${stack ?? ''}\n` + `${JSON.stringify(rest, null, 2)}\n`,
      );
    },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.int.test.ts'],
          globalSetup: ['test/helpers/prerequisites.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.int.test.ts'],
          globalSetup: ['test/helpers/prerequisites.ts', 'test/helpers/global-setup.ts'],
        },
      },
    ],
  },
});
