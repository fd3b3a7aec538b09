// The fake GitHub (test/helpers/fake-github.ts) and huddle's GitHub client together: issues read by
// label, a pull request opened as a draft then marked ready, found again rather than doubled,
// check runs read; every request and response checked against GitHub's OpenAPI description, and
// a request that strays from it caught.
import { afterEach, describe, expect, it } from 'vitest';
import { checksOf, githubClient, loadGitHubBacklog, openPullRequest } from '../../src/runtime/forge/github.js';
import { startFakeGitHub, type FakeGitHub } from './fake-github.js';

const TOKEN = 'ghp_fake_token_for_tests_0123456789';
let fake: FakeGitHub | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('the fake GitHub, held to the OpenAPI description', () => {
  it('serves issues, pull requests and checks to Octokit without straying from the description', async () => {
    fake = await startFakeGitHub({
      token: TOKEN,
      issues: [
        { number: 4, title: 'Add a greeting', body: 'Write hello.txt', labels: ['ready'] },
        { number: 5, title: 'Add a farewell', body: 'Depends on #4\nWrite bye.txt', labels: ['ready', 'later'] },
        { number: 6, title: 'Not labelled', labels: [] },
      ],
    });
    const client = githubClient({ token: TOKEN, baseUrl: fake.url });
    const backlog = await loadGitHubBacklog(client, { owner: 'acme', repo: 'app', labels: 'ready' });
    expect(backlog.issues.map((i) => [i.number, i.dependsOn, i.labels])).toEqual([
      [4, [], ['ready']],
      [5, [4], ['ready', 'later']],
    ]);
    expect(backlog.issues[0]!.url).toBe('https://github.invalid/acme/app/issues/4');
    const searched = await loadGitHubBacklog(client, { owner: 'acme', repo: 'app', query: 'label:later' });
    expect(searched.issues.map((i) => i.number)).toEqual([5]);

    const pr = await openPullRequest(client, {
      owner: 'acme',
      repo: 'app',
      head: 'huddle/issue-4-add-a-greeting',
      base: 'main',
      title: 'Add a greeting',
      body: 'Closes #4',
    });
    expect(pr).toEqual({ number: 7, url: 'https://github.invalid/acme/app/pull/7', state: 'open', draft: false });
    expect(fake.requests.map((r) => r.operation)).toEqual(expect.arrayContaining(['pulls/list', 'pulls/create', 'graphql', 'pulls/get']));
    expect(fake.requests.find((r) => r.operation === 'pulls/create')!.body).toMatchObject({ draft: true });
    // Asked again: the open one is updated, not doubled.
    const again = await openPullRequest(client, {
      owner: 'acme',
      repo: 'app',
      head: 'huddle/issue-4-add-a-greeting',
      base: 'main',
      title: 'Add a greeting!',
      body: 'Closes #4',
    });
    expect(again.number).toBe(7);
    expect(fake.pulls).toHaveLength(1);
    expect(fake.pulls[0]!.title).toBe('Add a greeting!');

    fake.checks.set('huddle/issue-4-add-a-greeting', [
      { name: 'test', status: 'completed', conclusion: 'failure' },
      { name: 'lint', status: 'in_progress', conclusion: null },
    ]);
    expect(await checksOf(client, { owner: 'acme', repo: 'app' }, 'huddle/issue-4-add-a-greeting')).toEqual({ total: 2, failed: ['test'], pending: 1 });
    expect(fake.violations).toEqual([]);
  });

  it('catches a request the description does not allow, and a missing token', async () => {
    fake = await startFakeGitHub({ token: TOKEN });
    const client = githubClient({ token: TOKEN, baseUrl: fake.url });
    await expect(
      client.request('POST /repos/{owner}/{repo}/pulls', { owner: 'acme', repo: 'app', head: 'x', base: 'main', draft: 'yes' as unknown as boolean }),
    ).rejects.toThrow(/strays from the description/);
    await expect(client.request('GET /repos/{owner}/{repo}/pulls', { owner: 'acme', repo: 'app', colour: 'blue' })).rejects.toThrow(/strays/);
    expect(fake.violations).toEqual([
      expect.stringMatching(/^pulls\/create request body: \/draft must be boolean/),
      "pulls/list: query parameter 'colour' is not in the description",
    ]);
    const anonymous = githubClient({ token: undefined, baseUrl: fake.url });
    await expect(anonymous.rest.pulls.list({ owner: 'acme', repo: 'app' })).rejects.toThrow(/Requires authentication/);
  });
});
