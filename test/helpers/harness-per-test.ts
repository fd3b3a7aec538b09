// Vitest glue for the team harness, kept apart from it so that benchmarks can bundle the harness
// without pulling in the test runner.
import { afterEach } from 'vitest';
import { openTeamHarness, type TeamHarness, type TeamHarnessOptions } from './team-harness.js';

/**
 * For a test file: returns an `open` that opens a harness closed again after the current test
 * (registers the afterEach itself). `defaults` apply to every harness it opens.
 */
export function harnessPerTest(defaults: TeamHarnessOptions = {}): (options?: TeamHarnessOptions) => Promise<TeamHarness> {
  let current: TeamHarness | undefined;
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return async (options = {}) => {
    current = await openTeamHarness({ ...defaults, ...options, env: { ...defaults.env, ...options.env } });
    return current;
  };
}
