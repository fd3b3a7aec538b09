// The local backlog (docs/backlog.md#a-local-backlog): `.team/backlog/*.md`, one issue per file,
// YAML front matter (title, labels, depends-on, number) and the body with its acceptance criteria.
// A bad file is skipped with one line saying why; the others go on.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { IssueFrontMatter, type Backlog, type Issue, type SkippedIssue } from './issue.js';

export function backlogDir(root: string): string {
  return path.join(root, '.team', 'backlog');
}

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;

/** One file: the issue, or why it was skipped. The number comes from `number:` or the file name's leading digits. */
export function parseIssueFile(file: string, text: string): Issue | SkippedIssue {
  const source = file;
  const match = FRONT_MATTER.exec(text);
  if (!match) return { source, reason: 'no front matter (the file must start with --- and a title: line)' };
  let data: unknown;
  try {
    data = parseYaml(match[1]!);
  } catch (error) {
    return { source, reason: `front matter is not YAML: ${(error as Error).message.split('\n')[0]}` };
  }
  const parsed = IssueFrontMatter.safeParse(data ?? {});
  if (!parsed.success) {
    return { source, reason: parsed.error.issues.map((issue) => `${issue.path.join('.') || 'front matter'}: ${issue.message}`).join('; ') };
  }
  const fromName = /^(\d+)/.exec(path.basename(file))?.[1];
  const number = parsed.data.number ?? (fromName ? Number(fromName) : undefined);
  if (!number) return { source, reason: 'no issue number: add number: N to the front matter or start the file name with it (12-title.md)' };
  const deps = parsed.data['depends-on'];
  return {
    number,
    title: parsed.data.title,
    labels: parsed.data.labels,
    dependsOn: Array.isArray(deps) ? deps : [deps],
    body: match[2]!.trim(),
    source,
  };
}

export function loadLocalBacklog(root: string): Backlog {
  const dir = backlogDir(root);
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.md'));
  } catch {
    return { issues: [], skipped: [{ source: path.relative(root, dir), reason: 'no such directory: write one issue per file there (docs/backlog.md)' }] };
  }
  const issues: Issue[] = [];
  const skipped: SkippedIssue[] = [];
  const seen = new Map<number, string>();
  for (const name of names.sort()) {
    const file = path.join(path.relative(root, dir), name);
    let text: string;
    try {
      text = readFileSync(path.join(dir, name), 'utf8');
    } catch (error) {
      skipped.push({ source: file, reason: `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` });
      continue;
    }
    const result = parseIssueFile(file, text);
    if ('reason' in result) {
      skipped.push(result);
    } else if (seen.has(result.number)) {
      skipped.push({ source: file, reason: `issue number ${result.number} is taken by ${seen.get(result.number)}` });
    } else {
      seen.set(result.number, file);
      issues.push(result);
    }
  }
  return { issues, skipped };
}
