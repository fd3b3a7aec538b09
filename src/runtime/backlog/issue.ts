// One issue of a backlog, whatever it came from (docs/backlog.md#issues): a number, a title, the
// issues it depends on, its text (with the acceptance criteria), and the branch and teammate name
// huddle derives from it.
import * as z from 'zod';

export interface Issue {
  number: number;
  title: string;
  labels: string[];
  /** Numbers of the issues that must be done first: this one is stacked on the first one's branch. */
  dependsOn: number[];
  /** The body: what to do and its acceptance criteria. */
  body: string;
  /** Where it lives: a file of the local backlog, or the issue's page on GitHub. */
  source: string;
  url?: string | undefined;
}

/** One line for a file or an issue that was skipped, and why. */
export interface SkippedIssue {
  source: string;
  reason: string;
}

export interface Backlog {
  issues: Issue[];
  skipped: SkippedIssue[];
}

/** A local issue file's front matter. */
export const IssueFrontMatter = z.strictObject({
  number: z.number().int().positive().optional(),
  title: z.string().trim().min(1, 'title is empty'),
  labels: z.array(z.string()).default([]),
  'depends-on': z.union([z.number().int().positive(), z.array(z.number().int().positive())]).default([]),
});

/** `issue-12-add-a-login-page`: a teammate name (at most 32 characters) and, with `huddle/`, the branch. */
export function issueSlugName(issue: Pick<Issue, 'number' | 'title'>): string {
  const prefix = `issue-${issue.number}`;
  const slug = issue.title
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  const room = 32 - prefix.length - 1;
  // Cut at a word's end when the title is longer than the room.
  let cut = slug.slice(0, room);
  if (slug.length > room && slug[room] !== '-' && cut.includes('-')) cut = cut.slice(0, cut.lastIndexOf('-'));
  cut = cut.replace(/-+$/, '');
  return cut ? `${prefix}-${cut}` : prefix;
}

export function issueBranch(issue: Pick<Issue, 'number' | 'title'>): string {
  return `huddle/${issueSlugName(issue)}`;
}

/**
 * The issues in an order where every dependency comes first. A dependency on an issue not in the
 * backlog, or a cycle, skips the issues caught in it (one line each), never the rest.
 */
export function orderIssues(backlog: Backlog): Backlog {
  const byNumber = new Map(backlog.issues.map((issue) => [issue.number, issue]));
  const skipped = [...backlog.skipped];
  const ordered: Issue[] = [];
  const state = new Map<number, 'visiting' | 'done' | 'bad'>();
  const visit = (issue: Issue, trail: number[]): boolean => {
    const now = state.get(issue.number);
    if (now === 'done') return true;
    if (now === 'bad') return false;
    if (now === 'visiting') {
      skipped.push({ source: issue.source, reason: `depends-on makes a cycle: ${[...trail, issue.number].map((n) => `#${n}`).join(' → ')}` });
      state.set(issue.number, 'bad');
      return false;
    }
    state.set(issue.number, 'visiting');
    for (const dep of issue.dependsOn) {
      const target = byNumber.get(dep);
      if (!target) {
        skipped.push({ source: issue.source, reason: `depends on #${dep}, which is not in the backlog` });
        state.set(issue.number, 'bad');
        return false;
      }
      if (!visit(target, [...trail, issue.number])) {
        if (state.get(issue.number) !== 'bad') skipped.push({ source: issue.source, reason: `depends on #${dep}, which was skipped` });
        state.set(issue.number, 'bad');
        return false;
      }
    }
    state.set(issue.number, 'done');
    ordered.push(issue);
    return true;
  };
  for (const issue of [...backlog.issues].sort((a, b) => a.number - b.number)) visit(issue, []);
  return { issues: ordered, skipped };
}
