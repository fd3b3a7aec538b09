// Playbooks (docs/playbooks.md): how a backlog run takes one issue to a pull request, as a file.
// `.team/playbooks/NAME.md` holds YAML front matter (the phases in order, who runs them, the gates
// between them, retry caps, the plan's approver, the review's domains) and a body of instructions
// for the issue's builder; the built-in `issue-to-pr` is such a file too (issue-to-pr.md), read by
// the same parser. A bad file is one line naming it, the key and what was expected.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as z from 'zod';
import { parse as parseYaml } from 'yaml';
import { describeIssues } from '../settings/errors.js';
import { AGENT_KINDS, PLAN_APPROVERS, type PlanApprover } from '../settings/schema.js';
import { DEFAULT_REVIEW_DOMAINS, SEVERITIES, type ReviewDomains, type Severity } from '../store/board/findings.js';
import issueToPr from './issue-to-pr.md';

export const PHASES = ['understand', 'explore', 'plan', 'approval', 'implement', 'self-review', 'review', 'ship', 'watch-checks'] as const;
export type PhaseName = (typeof PHASES)[number];

/** Each phase's gate: what must hold before the next phase begins (`none` turns it off where that is allowed). */
export const GATES = {
  understand: 'none',
  explore: 'none',
  plan: 'none',
  approval: 'plan-approved',
  implement: 'verify-green',
  'self-review': 'none',
  review: 'review-approved',
  ship: 'pushed',
  'watch-checks': 'checks-green',
} as const satisfies Record<PhaseName, string>;

/** The phases the issue's builder runs itself, one agent in its worktree: who runs it is said on implement. */
const BUILDER_PHASES: readonly PhaseName[] = ['understand', 'explore', 'plan', 'implement', 'self-review'];
/** Gates that may be turned off (the approval, review and push are what a run is for). */
const OPTIONAL_GATES: readonly PhaseName[] = ['implement', 'watch-checks'];

const severity = z.enum(SEVERITIES);

const Domain = z.union([
  z.string().min(1),
  z.strictObject({ name: z.string().min(1), blocks_at: severity.describe('the lowest severity that blocks the approval') }),
]);

const Phase = z
  .strictObject({
    phase: z.enum(PHASES),
    gate: z.enum([...new Set([...Object.values(GATES), 'none'])] as [string, ...string[]]).optional(),
    /** Who runs it: implement (the builder, for every builder phase) and review only. */
    role: z.string().min(1).optional(),
    model: z.string().min(1).optional(),
    agent: z.enum(['huddle', ...AGENT_KINDS]).optional(),
    /** explore: read-only helpers in parallel. */
    helpers: z.number().int().min(1).max(4).optional(),
    /** approval: who approves the plan, over plans.approver. */
    approver: z.enum(PLAN_APPROVERS).optional(),
    auto_approve_minutes: z.number().positive().optional(),
    /** implement: the verify command (the run's --verify wins). */
    verify: z.string().min(1).optional(),
    /** implement: failed verify runs; review: rounds of changes; watch-checks: failed checks sent back. */
    retries: z.number().int().min(0).max(20).optional(),
    /** review: the domains, each a name or { name, blocks_at }. */
    domains: z.array(Domain).min(1).optional(),
    /** Words for whoever runs the phase, added to what huddle says. */
    instructions: z.string().min(1).optional(),
  })
  .superRefine((phase, ctx) => {
    const issue = (message: string, key: string) => ctx.addIssue({ code: 'custom', message, path: [key] });
    const only = (key: keyof typeof phase, phases: readonly PhaseName[]) => {
      if (phase[key] !== undefined && !phases.includes(phase.phase)) issue(`only ${phases.join(' and ')} take ${key}`, key);
    };
    only('helpers', ['explore']);
    only('approver', ['approval']);
    only('auto_approve_minutes', ['approval']);
    only('verify', ['implement']);
    only('retries', ['implement', 'review', 'watch-checks']);
    only('domains', ['review']);
    for (const key of ['role', 'model', 'agent'] as const) {
      if (phase[key] !== undefined && phase.phase !== 'implement' && phase.phase !== 'review')
        issue(
          BUILDER_PHASES.includes(phase.phase)
            ? `the builder runs ${phase.phase}: say who on implement`
            : `${phase.phase} is run by huddle; only implement and review take ${key}`,
          key,
        );
    }
    if (phase.phase === 'review' && phase.role !== undefined && phase.role !== 'reviewer') issue('a review is run by role reviewer', 'role');
    if (phase.gate !== undefined && phase.gate !== GATES[phase.phase] && !(phase.gate === 'none' && OPTIONAL_GATES.includes(phase.phase)))
      issue(
        `${phase.phase}'s gate is ${GATES[phase.phase]}${OPTIONAL_GATES.includes(phase.phase) ? ' or none' : ''}, not ${JSON.stringify(phase.gate)}`,
        'gate',
      );
  });

const FrontMatter = z
  .strictObject({
    name: z.string().min(1).optional(),
    description: z.string().optional(),
    phases: z.array(Phase).min(1),
  })
  .superRefine((front, ctx) => {
    const names = front.phases.map((p) => p.phase);
    const at = (name: PhaseName) => names.indexOf(name);
    names.forEach((name, i) => {
      if (names.indexOf(name) !== i) ctx.addIssue({ code: 'custom', message: `${name} is listed twice`, path: ['phases', i, 'phase'] });
      else if (i > 0 && PHASES.indexOf(name) < PHASES.indexOf(names[i - 1]!))
        ctx.addIssue({ code: 'custom', message: `${name} comes before ${names[i - 1]} (the order is ${PHASES.join(' → ')})`, path: ['phases', i, 'phase'] });
    });
    const need = (what: string) => ctx.addIssue({ code: 'custom', message: what, path: ['phases'] });
    if (at('implement') < 0) need('a playbook needs an implement phase');
    if (at('plan') >= 0 && at('approval') < 0) need('a plan phase needs an approval phase after it');
    if (at('approval') >= 0 && at('plan') < 0) need('an approval phase needs a plan phase before it');
    if (at('watch-checks') >= 0 && at('ship') < 0) need('watch-checks needs a ship phase before it');
  });

export interface Runner {
  role: string;
  model?: string | undefined;
  agent?: 'huddle' | (typeof AGENT_KINDS)[number] | undefined;
}

/** A playbook as a backlog run follows it. */
export interface Playbook {
  name: string;
  description: string;
  /** Where it came from: `built-in` or the file. */
  source: string;
  phases: Array<z.infer<typeof Phase>>;
  /** Instructions for every issue's builder (the file's body). */
  instructions: string;
  builder: Runner;
  /** undefined: no review phase (an issue is done when its builder completes it). */
  reviewer?: Runner & { rounds?: number | undefined; domains: ReviewDomains };
  /** Helpers to explore with (0: no explore phase). */
  explorers: number;
  /** undefined: no plan phase (the builder builds at once). */
  approval?: { approver?: PlanApprover | undefined; autoApproveMinutes?: number | undefined };
  /** The verify command, failed runs allowed before the issue is given up (undefined: no verify gate). */
  verify?: { command?: string | undefined; retries: number };
  selfReview: boolean;
  ship: boolean;
  /** Failed checks sent back to the builder before the issue is given up (undefined: checks not watched). */
  checks?: { retries: number; gate: boolean };
}

export class PlaybookError extends Error {}

const FRONT = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;

export const BUILT_IN: Record<string, string> = { 'issue-to-pr': issueToPr };
export const DEFAULT_PLAYBOOK = 'issue-to-pr';

export function playbooksDir(root: string): string {
  return path.join(root, '.team', 'playbooks');
}

/** Parses one playbook file; a PlaybookError is one line naming `source`. */
export function parsePlaybook(fileName: string, text: string, source: string): Playbook {
  const match = FRONT.exec(text);
  if (!match) throw new PlaybookError(`${source}: no front matter (the file starts with --- and a phases: list; docs/playbooks.md)`);
  let data: unknown;
  try {
    data = parseYaml(match[1]!);
  } catch (error) {
    throw new PlaybookError(`${source}: the front matter is not YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  const parsed = FrontMatter.safeParse(data ?? {}, { reportInput: true });
  if (!parsed.success) throw new PlaybookError(describeIssues(source, parsed.error.issues, FrontMatter));
  const front = parsed.data;
  const phase = (name: PhaseName) => front.phases.find((p) => p.phase === name);
  const implement = phase('implement')!;
  const review = phase('review');
  const approval = phase('approval');
  const watch = phase('watch-checks');
  return {
    name: front.name ?? fileName,
    description: front.description ?? '',
    source,
    phases: front.phases,
    instructions: match[2]!.trim(),
    builder: { role: implement.role ?? 'coder', model: implement.model, agent: implement.agent },
    ...(review
      ? { reviewer: { role: 'reviewer', model: review.model, agent: review.agent, rounds: review.retries, domains: reviewDomains(review.domains) } }
      : {}),
    explorers: phase('explore') ? (phase('explore')!.helpers ?? 3) : 0,
    ...(approval ? { approval: { approver: approval.approver, autoApproveMinutes: approval.auto_approve_minutes } } : {}),
    ...(implement.gate === 'none' ? {} : { verify: { command: implement.verify, retries: implement.retries ?? 3 } }),
    selfReview: phase('self-review') !== undefined,
    ship: phase('ship') !== undefined,
    ...(watch ? { checks: { retries: watch.retries ?? 2, gate: watch.gate !== 'none' } } : {}),
  };
}

function reviewDomains(domains: Array<z.infer<typeof Domain>> | undefined): ReviewDomains {
  if (!domains) return { domains: [...DEFAULT_REVIEW_DOMAINS], blocksAt: { security: 'high' } };
  const blocksAt: Record<string, Severity> = {};
  for (const domain of domains) if (typeof domain !== 'string') blocksAt[domain.name] = domain.blocks_at;
  return { domains: domains.map((d) => (typeof d === 'string' ? d : d.name)), blocksAt };
}

/** The names a run may choose: the workspace's files and the built-in ones. */
export function playbookNames(root: string): string[] {
  let files: string[] = [];
  try {
    files = readdirSync(playbooksDir(root)).filter((f) => f.endsWith('.md'));
  } catch {
    // No playbooks folder: only the built-in ones.
  }
  return [...new Set([...files.map((f) => f.slice(0, -3)), ...Object.keys(BUILT_IN)])].sort();
}

/** `.team/playbooks/NAME.md`, else the built-in NAME; a PlaybookError (one line) when neither is there or it is bad. */
export function loadPlaybook(root: string, name: string): Playbook {
  if (!/^[\w.-]+$/.test(name)) throw new PlaybookError(`--playbook takes a playbook's name (${playbookNames(root).join(', ')}), not '${name}'`);
  const file = path.join(playbooksDir(root), `${name}.md`);
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // No such file: a built-in one, or the names there are.
  }
  if (text !== undefined) return parsePlaybook(name, text, path.relative(root, file));
  const builtIn = BUILT_IN[name];
  if (builtIn !== undefined) return parsePlaybook(name, builtIn, `built-in ${name}`);
  throw new PlaybookError(`no playbook '${name}': the playbooks are ${playbookNames(root).join(', ')} (files in .team/playbooks/NAME.md)`);
}
