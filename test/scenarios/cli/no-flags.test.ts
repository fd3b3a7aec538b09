// The command line (src/cli-main.ts): `huddle` alone starts the console without loading the flag parser
// (docs/console.md#starting), and `huddle -p "PROMPT"` runs headless without it; each must mean exactly what
// the parser makes of the same arguments.
import { describe, expect, it } from 'vitest';
import { interpretFlags, readFlags, readPromptOnly } from '../../../src/cli-main.js';

describe('the command line', () => {
  it('huddle alone, read without commander, gives the options commander gives for no arguments', async () => {
    const withoutParser = interpretFlags({ opts: {}, args: [] });
    expect(withoutParser).toEqual(interpretFlags(await readFlags([])));
    expect(withoutParser).toMatchObject({ command: undefined, prompt: undefined, resume: false, fresh: false, budget: {} });
  });

  it('huddle -p "PROMPT", read without commander, gives the options commander gives', async () => {
    for (const argv of [
      ['-p', 'run the rounds'],
      ['--print', 'hello world'],
      ['-p', 'demo'],
      ['-p', 'worker'],
    ]) {
      const withoutParser = readPromptOnly(argv);
      expect(withoutParser, argv.join(' ')).toBeDefined();
      expect(interpretFlags(withoutParser!), argv.join(' ')).toEqual(interpretFlags(await readFlags(argv)));
    }
    expect(interpretFlags(readPromptOnly(['-p', 'x'])!)).toMatchObject({ prompt: 'x', command: undefined });
    // Any other shape is commander's to read.
    for (const argv of [['-p'], ['-p', '--json'], ['-p', 'x', '--json'], ['--print=x'], ['-px'], ['--model', 'x'], ['demo', 'x']])
      expect(readPromptOnly(argv), argv.join(' ')).toBeUndefined();
  });

  it('reads flags through commander as before', async () => {
    expect(interpretFlags(await readFlags(['--fresh', '--model', 'opus']))).toMatchObject({ fresh: true, model: expect.stringContaining('opus') });
    expect(interpretFlags(await readFlags(['--version']))).toBe('version');
  });
});
