// The console's question about workspace settings that widen trust (docs/trust.md): the session
// opened without them, and the person is asked once, in the lead's pane, whether to trust the files
// as they are now. Yes records it (outside the workspace) and applies from the next start; no
// leaves them ignored, and the next start asks again.
import { workspaceKey } from '../runtime/settings/load.js';
import { TrustStore, type UntrustedFile } from '../runtime/settings/trust.js';
import { LEAD_NAME } from '../runtime/vocabulary.js';
import type { TeamSession } from './team-session.js';

export async function askToTrust(
  session: TeamSession,
  note: (text: string, tone: 'info' | 'warn') => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const { trusted, untrusted } = session.settingsTrust();
  if (!untrusted.length) return;
  const files = [...untrusted];
  const summary = files.map((f) => `${f.file} (${f.settings.join(', ')})`).join(', ');
  const outcome = await session.askPerson({
    agent: LEAD_NAME,
    tool: 'trust',
    summary,
    reason: `the workspace's settings ask for what only you can allow; they are ignored until you trust ${files.length === 1 ? 'this file' : 'these files'} as ${files.length === 1 ? 'it is' : 'they are'} now (huddle trust shows them in full)`,
    prefixes: [],
    detail: files.map((f) => `${f.file}: ${f.settings.join(', ')}`).join('\n'),
  });
  if (outcome.kind !== 'approved') {
    if (outcome.kind === 'denied') note(`still ignored: ${summary}; huddle asks again at the next start`, 'warn');
    return;
  }
  TrustStore.at(env).record(workspaceKey(session.workspace.root), files);
  // /config shows them as trusted from now on.
  untrusted.splice(0, untrusted.length, ...untrusted.filter((u) => !files.includes(u)));
  trusted.push(...files);
  note(
    `trusted ${files.map((f) => f.file).join(', ')} as ${files.length === 1 ? 'it is' : 'they are'} now; ${files.length === 1 ? 'it applies' : 'they apply'} from the next start of huddle`,
    'info',
  );
}
