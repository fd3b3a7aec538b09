// A known git identity and no user or system git config, so commits in tests work the same on any
// machine; set on this process, so the teammates' bash inherits it too.
export const TEST_GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'Huddle Test',
  GIT_AUTHOR_EMAIL: 'test@huddle.invalid',
  GIT_COMMITTER_NAME: 'Huddle Test',
  GIT_COMMITTER_EMAIL: 'test@huddle.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
};

export function useTestGitIdentity(): void {
  Object.assign(process.env, TEST_GIT_IDENTITY);
}
