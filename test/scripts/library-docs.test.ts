// docs/library.md's reference is generated from the library's declarations (scripts/library-docs.mjs):
// it fails when a change to src/library's types or doc comments was not followed by `npm run docs`.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/run-cli.js';
import { LIBRARY_DOC, updateLibraryDoc } from '../../scripts/library-docs.mjs';

describe('docs/library.md', () => {
  it('holds the reference the declarations generate (npm run docs)', () => {
    const current = readFileSync(path.join(REPO_ROOT, LIBRARY_DOC), 'utf8');
    const next = updateLibraryDoc(current);
    expect(next === current, `${LIBRARY_DOC} is stale; run npm run docs`).toBe(true);
    // Every public export is in it.
    for (const name of ['openTeam', 'Team', 'HuddleError', 'OpenTeamOptions', 'SpawnOptions', 'RunEnd']) expect(current).toContain(`### ${name}\n`);
  }, 180_000);
});
