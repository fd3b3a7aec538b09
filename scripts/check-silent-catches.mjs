// A caught error that is dropped must say why: every `.catch(() => undefined)`, `.catch(() => {})`
// and empty `catch {}` block either logs, or has a comment on the line above (or at its end, or
// inside the empty block) saying why nothing is owed. Run by `npm run lint`.
import { readFileSync } from 'node:fs';
import { glob } from 'node:fs/promises';

const SILENT = [/\.catch\(\s*\(\s*\w*\s*\)\s*=>\s*(?:undefined|\{\s*\}|null|void 0)\s*\)/, /\bcatch\s*(?:\(\s*\w*\s*\))?\s*\{\s*\}/];
const COMMENT = /^\s*(?:\/\/|\/\*|\*)/;

const problems = [];
for await (const file of glob(['src/**/*.{ts,tsx}', 'scripts/**/*.mjs', 'bench/**/*.{ts,mjs}'])) {
  const lines = readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    if (!SILENT.some((pattern) => pattern.test(line))) return;
    if (/\/\/|\/\*/.test(line.replace(/(['"`]).*?\1/g, ''))) return; // says why at the end of the line
    // The comment may sit anywhere above it in the same statement (a chained call's first line).
    for (let above = i - 1; above >= 0 && above >= i - 12; above--) {
      if (COMMENT.test(lines[above])) return;
      if (/[;{}]\s*$/.test(lines[above])) break;
    }
    problems.push(`${file}:${i + 1}: an error is dropped without a word: log it, or say why on the line above`);
  });
}
if (problems.length) {
  process.stderr.write(`${problems.join('\n')}\n${problems.length} silent catch(es)\n`);
  process.exit(1);
}
process.stdout.write('check-silent-catches: every dropped error says why\n');
