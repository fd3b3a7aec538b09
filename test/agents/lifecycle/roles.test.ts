// Role files: huddle's own examples in .team/roles parse, and bad front matter is a clear error.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRoles, parseRole } from '../../../src/agents/lifecycle/roles.js';

describe('roles', () => {
  it("loads huddle's own example roles over the built-in ones", () => {
    const { roles, errors } = loadRoles(path.resolve(import.meta.dirname, '../../../.team'));
    expect(errors).toEqual([]);
    expect(roles.get('architect')).toMatchObject({ plan_mode_required: true, model: 'claude-opus-4-5' });
    expect(roles.get('tester')?.tools).toContain('bash');
    expect(roles.get('coder')?.source).toMatch(/\.team\/roles\/coder\.md$/);
    expect(roles.get('coder')?.body).toMatch(/npm run typecheck/);
  });

  it('reads a role without front matter as its body only, and names the file of a broken one', () => {
    expect(parseRole('plain', 'Just do it.\n', 'plain.md')).toMatchObject({ name: 'plain', body: 'Just do it.' });
    expect(() => parseRole('bad', '---\nmodel: [unclosed\n---\nbody', 'bad.md')).toThrow(/bad\.md: the front matter is not valid YAML/);
    expect(() => parseRole('bad', '---\ntools: 7\n---\nbody', 'bad.md')).toThrow(/bad\.md: tools must be a list/);
  });
});
