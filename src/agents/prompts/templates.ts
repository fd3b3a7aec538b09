// What huddle says to the model, as files (docs/contract.md#injected-turns): every system prompt and every fixed
// turn or message huddle injects is a Markdown template in this folder, bundled into huddle at build time
// (esbuild's text loader; vitest's config has the same for tests), so nothing is read from disk at run time.
// test/agents/prompts/prompts-snapshot.test.ts renders each one into a committed snapshot.
//
// The syntax is a small subset of Mustache:
//   {{name}}                   the value, as it is (never scanned again for braces)
//   {{#name}}…{{/name}}        the text between, when the value is truthy (a non-empty string, a non-zero number, true)
//   {{^name}}…{{/name}}        the text between, when it is not
// Every name a template uses must be given, and no other: a typo is an error, never a silent blank.
import agentSystem from './agent-system.md';
import compactionSummaryRequest from './compaction-summary-request.md';
import externalTeammate from './external-teammate.md';
import identityLine from './identity-line.md';
import leadSystem from './lead-system.md';
import messageChangesRequested from './message-changes-requested.md';
import messagePlanApprovalRequest from './message-plan-approval-request.md';
import messagePlanDecision from './message-plan-decision.md';
import messageReviewLimit from './message-review-limit.md';
import messageReviewOwnerGone from './message-review-owner-gone.md';
import messageShutdownRequest from './message-shutdown-request.md';
import messageShutdownResponse from './message-shutdown-response.md';
import messageShutdownTimedOut from './message-shutdown-timed-out.md';
import messageTeammateFailed from './message-teammate-failed.md';
import messageTeammateStalled from './message-teammate-stalled.md';
import messageTeammateStopped from './message-teammate-stopped.md';
import projectInstructionsFile from './project-instructions-file.md';
import projectInstructionsLeftOut from './project-instructions-left-out.md';
import projectInstructions from './project-instructions.md';
import roleCoder from './role-coder.md';
import roleReviewer from './role-reviewer.md';
import roleTester from './role-tester.md';
import sessionStartContext from './session-start-context.md';
import teammateSystem from './teammate-system.md';
import teammateWorktree from './teammate-worktree.md';
import turnAutoClaimed from './turn-auto-claimed.md';
import turnCompacted from './turn-compacted.md';
import turnRestarted from './turn-restarted.md';
import turnResumed from './turn-resumed.md';
import turnReviewRequested from './turn-review-requested.md';

const TEMPLATES = {
  'agent-system': agentSystem,
  'compaction-summary-request': compactionSummaryRequest,
  'external-teammate': externalTeammate,
  'identity-line': identityLine,
  'lead-system': leadSystem,
  'message-changes-requested': messageChangesRequested,
  'message-plan-approval-request': messagePlanApprovalRequest,
  'message-plan-decision': messagePlanDecision,
  'message-review-limit': messageReviewLimit,
  'message-review-owner-gone': messageReviewOwnerGone,
  'message-shutdown-request': messageShutdownRequest,
  'message-shutdown-response': messageShutdownResponse,
  'message-shutdown-timed-out': messageShutdownTimedOut,
  'message-teammate-failed': messageTeammateFailed,
  'message-teammate-stalled': messageTeammateStalled,
  'message-teammate-stopped': messageTeammateStopped,
  'project-instructions-file': projectInstructionsFile,
  'project-instructions-left-out': projectInstructionsLeftOut,
  'project-instructions': projectInstructions,
  'role-coder': roleCoder,
  'role-reviewer': roleReviewer,
  'role-tester': roleTester,
  'session-start-context': sessionStartContext,
  'teammate-system': teammateSystem,
  'teammate-worktree': teammateWorktree,
  'turn-auto-claimed': turnAutoClaimed,
  'turn-compacted': turnCompacted,
  'turn-restarted': turnRestarted,
  'turn-resumed': turnResumed,
  'turn-review-requested': turnReviewRequested,
} as const;

export type TemplateName = keyof typeof TEMPLATES;
export type TemplateValue = string | number | boolean;

export class TemplateError extends Error {}

const SECTION = /\{\{([#^])(\w+)\}\}([\s\S]*?)\{\{\/\2\}\}/g;
const PLACEHOLDER = /\{\{(\w+)\}\}/g;
/** Any tag: a placeholder, a section's opening or its close. */
const TAG = /\{\{[#^/]?(\w+)\}\}/g;

/** The names of the templates, for the test that requires a snapshot of each. */
export const templateNames = Object.keys(TEMPLATES) as TemplateName[];

/** The template's text as in its file (without the file's final newline). */
export function templateText(name: TemplateName): string {
  return TEMPLATES[name].replace(/\n$/, '');
}

/** Fills the template `name` with `values`; throws TemplateError on a missing, unknown or malformed name. */
export function fill(name: TemplateName, values: Record<string, TemplateValue>): string {
  return render(templateText(name), values, `template ${name}`);
}

/** `fill` for a text of the same syntax (`label` names it in errors). */
export function render(text: string, values: Record<string, TemplateValue>, label = 'template'): string {
  const used = new Set([...text.matchAll(TAG)].map((match) => match[1]!));
  const missing = [...used].filter((key) => !Object.hasOwn(values, key));
  const unknown = Object.keys(values).filter((key) => !used.has(key));
  if (missing.length || unknown.length) {
    const problems = [missing.length && `no value for ${missing.join(', ')}`, unknown.length && `no placeholder for ${unknown.join(', ')}`];
    throw new TemplateError(`${label}: ${problems.filter(Boolean).join('; ')}`);
  }
  // Every section closed and every tag well formed, whichever sections the values keep.
  if (
    sections(text, () => true)
      .replace(PLACEHOLDER, '')
      .includes('{{')
  )
    throw new TemplateError(`${label}: an unclosed section or a malformed tag`);
  // One pass: a value is inserted as it is, never read again for tags.
  const kept = sections(text, (kind, key) => Boolean(values[key]) === (kind === '#'));
  return kept.replace(PLACEHOLDER, (_tag, key: string) => String(values[key]));
}

/** Each section's text where `keep` says so (inner sections the same way), else nothing; placeholders stay. */
function sections(text: string, keep: (kind: string, key: string) => boolean): string {
  return text.replace(SECTION, (_whole, kind: string, key: string, inner: string) => (keep(kind, key) ? sections(inner, keep) : ''));
}
