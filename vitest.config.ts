import { defineConfig } from 'vitest/config';

/** Unit tests of the harness and the engine kit: a fake engine on an injected clock, no venv, no generated suite. */
const UNIT = ['packages/core/test/harness/**/*.test.ts', 'packages/core/test/engine-kit/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // Two cores: benchmarks inside tests would fight each other; files run one at a time.
    fileParallelism: false,
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT } },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts', 'site/test/**/*.test.ts'],
          exclude: [...UNIT, '**/node_modules/**'],
          // Everything else runs on the bundled suite and LM, which this generates (a no-op once they exist).
          globalSetup: ['test/global-setup.ts'],
        },
      },
    ],
  },
});
