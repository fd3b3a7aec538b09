// Human words for the team's plumbing, as the panes show it: protocol messages ("lead asked alice to
// shut down", "alice agreed"), internal turns (an identity block after a resume or a compaction) as
// one plain line instead of a prompt, the person as "you". The words agents need (request ids,
// "Answer with …") stay in their context; the screen is for people.

/** The person, as the bus and the events name them. */
export const PERSON = 'user';

export function who(name: string): string {
  return name === PERSON ? 'you' : name;
}

export interface InboxMessageView {
  from: string;
  type: string;
  content: string;
  approve?: boolean | undefined;
  reason?: string | undefined;
  feedback?: string | undefined;
  plan?: string | undefined;
}

/** How a delivered message reads in its recipient's pane: who, and what, in words. */
export function describeInboxMessage(message: InboxMessageView, to: string | undefined): { from: string; text: string; protocol: boolean } {
  const from = who(message.from);
  const recipient = to ? who(to) : 'them';
  const content = withoutInstructions(message.content);
  switch (message.type) {
    case 'shutdown_request': {
      // The person's own request needs no reason told back to them.
      const reason = message.from === PERSON ? undefined : /Please shut down \((.+?)\)/.exec(message.content)?.[1];
      return { from, text: `${from} asked ${recipient} to shut down${reason ? ` (${reason})` : ''}`, protocol: true };
    }
    case 'shutdown_response':
      return message.approve === false || (message.approve === undefined && /declined/.test(message.content))
        ? {
            from,
            text: `${from} declined to shut down: ${message.reason ?? (content.replace(/^.*?declined to shut down:\s*/, '') || 'no reason given')}`,
            protocol: true,
          }
        : { from, text: `${from} agreed to shut down`, protocol: true };
    case 'plan_approval_request':
      return { from, text: `${from} asks ${recipient} to approve a plan${message.plan ? `:\n${message.plan}` : ''}`, protocol: true };
    case 'plan_approval_response':
      return message.approve === false
        ? { from, text: `${from} sent the plan back${message.feedback ? `: ${message.feedback}` : ''}`, protocol: true }
        : { from, text: `${from} approved the plan${message.feedback ? `: ${message.feedback}` : ''}`, protocol: true };
    case 'broadcast':
      return { from, text: `(to everyone) ${content}`, protocol: false };
    default:
      return { from, text: message.from === 'huddle' ? content.replace(/^\[huddle\]\s*/, '') : content, protocol: false };
  }
}

/** Drops the sentences that tell an agent which tool to answer with: they are for the model. */
function withoutInstructions(content: string): string {
  return content.replace(/\s*Answer with [a-z_]+ \{[^}]*\}\.?/g, '').trim();
}

export type PromptView =
  | { kind: 'prompt'; text: string; label?: string | undefined }
  /** A task handed to the agent (auto-claim, review request). */
  | { kind: 'claim'; text: string }
  /** A turn huddle wrote for the model (an identity block after a resume or a compaction), said in one line. */
  | { kind: 'internal'; text: string };

/** How a user turn that entered an agent's context reads in its pane. */
export function describePrompt(text: string, source: string, by: string | undefined): PromptView {
  if (source === 'auto_claim') return { kind: 'claim', text: describeFreshContext(text.replace(/<\/?(auto-claimed|review-requested)>/g, '')) };
  if (text.includes('<identity>')) return { kind: 'internal', text: describeIdentityTurn(text) };
  if (source === 'spawn') return { kind: 'prompt', text, label: `spawned by ${by ? who(by) : 'the lead'}` };
  if (source === 'system') return { kind: 'prompt', text, label: 'from huddle' };
  return { kind: 'prompt', text };
}

/**
 * A task's fresh context (src/agents/prompts/task-memory.ts) is for the model: its assignment again and
 * its memory of earlier tasks, said in one line where the pane shows the task.
 */
function describeFreshContext(text: string): string {
  return text.replace(/<fresh-context>[\s\S]*?<\/fresh-context>/, (block) => {
    const earlier = block.split('\n').filter((line) => line.startsWith('- ')).length;
    const memory = earlier ? `, with its memory of ${earlier} earlier ${earlier === 1 ? 'task' : 'tasks'}` : '';
    return `↺ a fresh context for this task${memory}`;
  });
}

function describeIdentityTurn(text: string): string {
  const tasks = [...text.matchAll(/^Task #(\d+): (.*)$/gm)].map((m) => `#${m[1]} ${m[2]}`);
  const owned = tasks.length ? `; its open tasks: ${tasks.join(', ')}` : '';
  if (text.includes('you were resumed')) return `resumed after huddle restarted, with its conversation so far${owned}`;
  if (text.includes('restarted with a fresh context')) return `restarted with a fresh context and a summary of its work${owned}`;
  if (text.includes('context was compacted')) return `context compacted: a summary replaces the earlier conversation${owned}`;
  return `context restored: who it is and what it owns${owned}`;
}

/** A tool call's one-line head: protocol tools in words, everything else as name and summary. */
export function describeToolCall(name: string, summary: string): { name: string; detail: string } {
  switch (name) {
    case 'shutdown_request':
      return { name: `asked ${summary} to shut down`, detail: '' };
    case 'shutdown_response':
      return { name: /refuse$/.test(summary) ? 'declined to shut down' : 'agreed to shut down', detail: '' };
    case 'plan_approval':
      if (/ (approve|reject)$/.test(summary)) return { name: summary.endsWith('approve') ? 'approved a plan' : 'sent a plan back', detail: '' };
      return { name: 'asked for approval of a plan', detail: '' };
    case 'send_message':
      return { name: 'message', detail: summary.replace(/^→ user:/, '→ you:') };
    default:
      return { name, detail: summary };
  }
}
