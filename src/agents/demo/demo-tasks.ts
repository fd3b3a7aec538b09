// The tasks of `huddle demo`'s scripted team (a tiny greeting library): what each one writes, how
// it is checked, and what its report says.

export interface DemoTask {
  subject: string;
  description: string;
  file: string;
  /** Run after writing the file, before reporting. */
  check?: string;
  content(author: string): string;
  report(id: number, checked: string | undefined): string;
}

export const GREET_JS: DemoTask = {
  subject: 'Write greet.js',
  description: 'A CommonJS module exporting greet(name): "Hello, <name>!", and "Hello, world!" without a name.',
  file: 'greet.js',
  content: (author) =>
    [
      `// greet.js: a tiny greeting library, written by ${author} in a huddle demo.`,
      "'use strict';",
      '',
      '/** A friendly greeting for `name`, or for the world when no name is given. */',
      "function greet(name = 'world') {",
      "  const who = String(name).trim() || 'world';",
      '  return `Hello, ${who}!`;',
      '}',
      '',
      'module.exports = { greet };',
      '',
    ].join('\n'),
  report: (id) => `Task #${id} done: wrote greet.js, exporting greet(name) → "Hello, <name>!".`,
};

export const GREET_TESTS: DemoTask = {
  subject: 'Write tests for greet.js',
  description: 'greet.test.js using node:assert, runnable with `node greet.test.js`.',
  file: 'greet.test.js',
  check: 'node greet.test.js',
  content: (author) =>
    [
      `// greet.test.js: run with \`node greet.test.js\` (written by ${author} in a huddle demo).`,
      "'use strict';",
      "const assert = require('node:assert/strict');",
      "const { greet } = require('./greet.js');",
      '',
      "assert.equal(greet('Ada'), 'Hello, Ada!');",
      "assert.equal(greet(), 'Hello, world!');",
      "assert.equal(greet('   '), 'Hello, world!');",
      "console.log('greet: 3 tests passed');",
      '',
    ].join('\n'),
  report: (id, checked) =>
    checked === 'passed'
      ? `Task #${id} done: wrote greet.test.js; \`node greet.test.js\` passes (3 tests).`
      : `Task #${id} done: wrote greet.test.js, but \`node greet.test.js\` fails: ${checked ?? 'not run'}.`,
};

export const README: DemoTask = {
  subject: 'Write README.md',
  description: 'What greet.js does, how to use it, how to run the tests.',
  file: 'README.md',
  content: (author) =>
    [
      '# greet',
      '',
      `A tiny greeting library, written by a huddle demo team (this README by ${author}).`,
      '',
      '```js',
      "const { greet } = require('./greet.js');",
      "greet('Ada'); // 'Hello, Ada!'",
      "greet();      // 'Hello, world!'",
      '```',
      '',
      'Run the tests with `node greet.test.js`.',
      '',
    ].join('\n'),
  report: (id) => `Task #${id} done: wrote README.md (usage, and how to run the tests).`,
};

export const DEMO_TASKS = [GREET_JS, GREET_TESTS, README];
export const SUMMARY_HEADING = '### Summary';

/** The task a subject names: exact match first, then by the file it mentions. */
export function demoTaskFor(subject: string): DemoTask | undefined {
  const exact = DEMO_TASKS.find((task) => task.subject === subject);
  if (exact) return exact;
  const s = subject.toLowerCase();
  if (s.includes('test')) return GREET_TESTS;
  if (s.includes('readme')) return README;
  if (s.includes('greet')) return GREET_JS;
  return undefined;
}
