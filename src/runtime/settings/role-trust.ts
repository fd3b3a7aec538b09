// Role files (.team/roles/<role>.md) are workspace files too: their front matter may make a role's
// teammates run in auto mode or as an external CLI. Those two fields wait for the person's trust like
// the settings files' widening entries (docs/trust.md); the rest of a role file applies at once.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isPlainObject } from './layers.js';
import { contentHash, TrustStore, type UntrustedFile } from './trust.js';

/** The front matter fields of a role file that widen trust. */
export function roleWidening(text: string): string[] {
  const match = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  if (!match) return [];
  let front: unknown;
  try {
    front = parseYaml(match[1] ?? '');
  } catch {
    return [];
  }
  if (!isPlainObject(front)) return [];
  const out: string[] = [];
  if (front.permission_mode === 'auto') out.push('permission_mode');
  if (front.agent !== undefined && front.agent !== 'huddle') out.push('agent');
  // Plans approved on huddle's clock: the person's choice (trust.ts says why).
  if (front.plan_approver === 'auto-after') out.push('plan_approver');
  return out;
}

/** Every role file of the workspace with widening fields, as trust records name it. */
export function roleFilesToTrust(root: string): UntrustedFile[] {
  const dir = path.join(root, '.team', 'roles');
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((f) => f.endsWith('.md'))
      .sort();
  } catch {
    return [];
  }
  const out: UntrustedFile[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    const settings = roleWidening(text);
    if (settings.length) out.push({ file: `.team/roles/${name}`, path: file, sha256: contentHash(text), settings });
  }
  return out;
}

/** Whether a role file's widening fields apply: none, or the person trusted this content. */
export function roleFileTrusted(workspace: string, name: string, text: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!roleWidening(text).length) return true;
  return TrustStore.at(env).isTrusted(workspace, `.team/roles/${name}`, contentHash(text));
}
