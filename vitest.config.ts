import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Four files at a time on a 2-core machine: most integration files wait (on lock expiry, a killed
    // worker's takeover, a browser, a child process starting), so the extra ones fill the idle time; their
    // waits are conditions with generous limits, not stopwatches, so the extra load slows them without
    // failing them. (Three took 724 s once the crash kit, middleware and browser suites came.)
    maxWorkers: 4,
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
