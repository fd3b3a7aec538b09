// Playbook files (.team/playbooks/NAME.md, docs/playbooks.md) are workspace files too: a plan approved
// on huddle's clock (approver auto-after) or a phase run by an external CLI waits for the person's
// trust like a role file's (role-trust.ts) and the settings files' widening entries (docs/trust.md).
import { frontMatterObject, markdownFilesToTrust } from './front-matter-trust.js';
import { isPlainObject } from './layers.js';
import { contentHash, TrustStore, type UntrustedFile } from './trust.js';

/** The front matter fields of a playbook that widen trust, as `phases[i].key`. */
export function playbookWidening(text: string): string[] {
  const front = frontMatterObject(text);
  if (!front || !Array.isArray(front.phases)) return [];
  const out: string[] = [];
  front.phases.forEach((phase: unknown, i) => {
    if (!isPlainObject(phase)) return;
    if (phase.approver === 'auto-after') out.push(`phases[${i}].approver`);
    if (phase.agent !== undefined && phase.agent !== 'huddle') out.push(`phases[${i}].agent`);
  });
  return out;
}

/** Every playbook file of the workspace with widening fields, as trust records name it. */
export function playbookFilesToTrust(root: string): UntrustedFile[] {
  return markdownFilesToTrust(root, 'playbooks', playbookWidening);
}

/** Whether a playbook file's widening fields apply: none, or the person trusted this content. */
export function playbookFileTrusted(workspace: string, fileName: string, text: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!playbookWidening(text).length) return true;
  return TrustStore.at(env).isTrusted(workspace, `.team/playbooks/${fileName}`, contentHash(text));
}
