import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // Tests spawn real processes and servers; the machine has two cores.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Trust records and user settings in a throwaway config directory, never the real ~/.config.
    setupFiles: ['test/helpers/isolated-config.ts'],
  },
});
