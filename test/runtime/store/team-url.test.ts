// Team URLs as people write them: credentials in the user part or in the query are secrets and
// never shown; a % that starts no escape is one line saying how to write it (no stack trace).
import { describe, expect, it } from 'vitest';
import { parseTeamUrl, redactUrl } from '../../../src/runtime/store/team-url.js';
import { makeWorkspace, runCli } from '../../helpers/run-cli.js';

describe('team URLs', () => {
  it('collects every credential, and shows the URL without them', () => {
    const parsed = parseTeamUrl(
      'postgres://me:s3cr%40t-pass@db.example:5432/huddle?sslmode=require&password=q-secret-1&sslpassword=k-secret-2&team=shop',
      'dir',
    );
    expect(parsed.team).toBe('shop');
    expect(parsed.password).toBe('s3cr@t-pass');
    expect(parsed.secrets).toEqual(['s3cr@t-pass', 'q-secret-1', 'k-secret-2']);
    expect(parsed.display).toBe('postgres://me:***@db.example:5432/huddle?sslmode=require&password=***&sslpassword=***&team=shop');
    expect(parsed.connectionString).not.toContain('team=');
  });

  it('redacts what does not even parse: a raw @ in the password, a password in the query', () => {
    expect(redactUrl('postgres://me:p@ss@word@db/x')).toBe('postgres://me:***@db/x');
    expect(redactUrl('postgres://db/x?password=hunter22&team=a')).toBe('postgres://db/x?password=***&team=a');
  });

  it('a % that starts no escape: one line, exit 2, the password never shown', async () => {
    const ws = makeWorkspace('huddle-team-url-');
    try {
      const result = await runCli(['-p', 'hi', '--team', 'postgres://me:pw%zz-very-secret@127.0.0.1:1/db', '--cwd', ws.dir]);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        "huddle: the password in the team URL 'postgres://me:***@127.0.0.1:1/db' has a % that starts no escape: write % as %25 (and @ as %40, : as %3A, / as %2F)\n",
      );
    } finally {
      ws.cleanup();
    }
  });
});
