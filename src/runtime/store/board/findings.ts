// Review findings (docs/playbooks.md#review-domains): what a reviewer found, one per call of its
// review_finding tool, each in a domain (security, feasibility, …) with a severity and a place. The
// domains a review looks at, and from which severity a finding in one blocks the approval, come with
// the run (a playbook's review phase); a decision stores the round's findings on the task.
import * as z from 'zod';

export const SEVERITIES = ['low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** The review domains of the built-in playbook, and what a reviewer without a playbook looks at. */
export const DEFAULT_REVIEW_DOMAINS = ['security', 'feasibility', 'granularity', 'dependencies', 'polish'] as const;

/** Which domains a review covers, and from which severity a finding in a domain blocks the approval. */
export interface ReviewDomains {
  domains: string[];
  /** Domain → the lowest severity that blocks (absent: findings in it never block). */
  blocksAt: Record<string, Severity>;
}

/** The default: every domain looked at; a security finding of high severity or worse blocks. */
export const DEFAULT_DOMAINS: ReviewDomains = { domains: [...DEFAULT_REVIEW_DOMAINS], blocksAt: { security: 'high' } };

/** A finding as the reviewer's tool takes it (zod-validated) and the task stores it (with its round). */
export const FindingInput = z.strictObject({
  domain: z.string().min(1).describe('The review domain: one of the domains of this review'),
  severity: z.enum(SEVERITIES).describe('How bad: low, medium, high or critical'),
  file: z.string().min(1).describe('The file, relative to the workspace'),
  line: z.number().int().positive().optional().describe('The line in that file'),
  text: z.string().min(1, 'say what is wrong and what to do').describe('What is wrong and what must change'),
});
export type FindingInput = z.infer<typeof FindingInput>;

export interface ReviewFinding extends FindingInput {
  /** Which review it was found in (1: the first). */
  round: number;
  reviewer: string;
  /** It held the task in review (changes had to be requested). */
  blocking: boolean;
}

export function blocks(domains: ReviewDomains, finding: Pick<FindingInput, 'domain' | 'severity'>): boolean {
  const at = domains.blocksAt[finding.domain];
  return at !== undefined && SEVERITIES.indexOf(finding.severity) >= SEVERITIES.indexOf(at);
}

/** `security high src/db.ts:12: …`: one finding on one line (PR bodies, messages, the record's summary). */
export function findingLine(finding: FindingInput & { blocking?: boolean }): string {
  const where = finding.line ? `${finding.file}:${finding.line}` : finding.file;
  return `${finding.domain} ${finding.severity}${finding.blocking ? ' (blocking)' : ''} ${where}: ${finding.text}`;
}

/** The findings stored on a task (a loose field; anything else there is not trusted as one). */
export function taskFindings(task: { review_findings?: unknown }): ReviewFinding[] {
  const parsed = z.array(FindingInput.extend({ round: z.number().int(), reviewer: z.string(), blocking: z.boolean() })).safeParse(task.review_findings ?? []);
  return parsed.success ? parsed.data : [];
}
