// Workspace Markdown files whose YAML front matter may widen trust (role files, playbooks): the front
// matter read leniently (a file that does not parse widens nothing; its own loader says what is wrong),
// and each file of a folder with widening fields listed as the trust records name it (docs/trust.md).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseYaml } from './lazy-yaml.js';
import { isPlainObject } from './layers.js';
import { contentHash, type UntrustedFile } from './trust.js';

/** A Markdown file's front matter as an object; undefined when it has none or it does not parse. */
export function frontMatterObject(text: string): Record<string, unknown> | undefined {
  const match = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  if (!match) return undefined;
  let front: unknown;
  try {
    front = parseYaml(match[1] ?? '');
  } catch {
    return undefined;
  }
  return isPlainObject(front) ? front : undefined;
}

/** Every `.md` file of `.team/<folder>` whose front matter widens trust (`widening` names the fields). */
export function markdownFilesToTrust(root: string, folder: string, widening: (text: string) => string[]): UntrustedFile[] {
  const dir = path.join(root, '.team', folder);
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
    const settings = widening(text);
    if (settings.length) out.push({ file: `.team/${folder}/${name}`, path: file, sha256: contentHash(text), settings });
  }
  return out;
}
