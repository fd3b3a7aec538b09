// Role files (.team/roles/<role>.md) are workspace files too: their front matter may make a role's
// teammates run in auto mode or as an external CLI. Those two fields wait for the person's trust like
// the settings files' widening entries (docs/trust.md); the rest of a role file applies at once.
import { frontMatterObject, markdownFilesToTrust } from './front-matter-trust.js';
import { contentHash, TrustStore, type UntrustedFile } from './trust.js';

/** The front matter fields of a role file that widen trust. */
export function roleWidening(text: string): string[] {
  const front = frontMatterObject(text);
  if (!front) return [];
  const out: string[] = [];
  if (front.permission_mode === 'auto') out.push('permission_mode');
  if (front.agent !== undefined && front.agent !== 'huddle') out.push('agent');
  // Plans approved on huddle's clock: the person's choice (trust.ts says why).
  if (front.plan_approver === 'auto-after') out.push('plan_approver');
  return out;
}

/** Every role file of the workspace with widening fields, as trust records name it. */
export function roleFilesToTrust(root: string): UntrustedFile[] {
  return markdownFilesToTrust(root, 'roles', roleWidening);
}

/** Whether a role file's widening fields apply: none, or the person trusted this content. */
export function roleFileTrusted(workspace: string, name: string, text: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!roleWidening(text).length) return true;
  return TrustStore.at(env).isTrusted(workspace, `.team/roles/${name}`, contentHash(text));
}
