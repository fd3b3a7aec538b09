// Playbook files (.team/playbooks/NAME.md, docs/playbooks.md) are workspace files too: a plan approved
// on huddle's clock (approver auto-after) or a phase run by an external CLI waits for the person's
// trust like a role file's (role-trust.ts) and the settings files' widening entries (docs/trust.md).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isPlainObject } from './layers.js';
import { contentHash, type UntrustedFile } from './trust.js';

/** The front matter fields of a playbook that widen trust, as `phases[i].key`. */
export function playbookWidening(text: string): string[] {
  const match = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  if (!match) return [];
  let front: unknown;
  try {
    front = parseYaml(match[1] ?? '');
  } catch {
    return [];
  }
  if (!isPlainObject(front) || !Array.isArray(front.phases)) return [];
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
  const dir = path.join(root, '.team', 'playbooks');
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
    const settings = playbookWidening(text);
    if (settings.length) out.push({ file: `.team/playbooks/${name}`, path: file, sha256: contentHash(text), settings });
  }
  return out;
}
