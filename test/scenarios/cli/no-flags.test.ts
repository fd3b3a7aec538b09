// The command line (src/cli-main.ts): `huddle` alone starts the console without loading the flag parser
// (docs/console.md#starting), and must mean exactly what the parser makes of no arguments.
import { describe, expect, it } from 'vitest';
import { interpretFlags, readFlags } from '../../../src/cli-main.js';

describe('the command line', () => {
  it('huddle alone, read without commander, gives the options commander gives for no arguments', async () => {
    const withoutParser = interpretFlags({ opts: {}, args: [] });
    expect(withoutParser).toEqual(interpretFlags(await readFlags([])));
    expect(withoutParser).toMatchObject({ command: undefined, prompt: undefined, resume: false, fresh: false, budget: {} });
  });

  it('reads flags through commander as before', async () => {
    expect(interpretFlags(await readFlags(['--fresh', '--model', 'opus']))).toMatchObject({ fresh: true, model: expect.stringContaining('opus') });
    expect(interpretFlags(await readFlags(['--version']))).toBe('version');
  });
});
