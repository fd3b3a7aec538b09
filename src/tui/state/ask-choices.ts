// The numbered choices a question for the person offers (1 yes, 2 yes and always, 3 no), by what it is
// about: data the keys answer with (keys/intents.ts) and the ask box draws (components/ask-box.ts).
import type { ApprovalView } from './console-store.js';

export type AskAnswer = 'approve' | 'always' | 'deny';

export interface AskChoice {
  key: '1' | '2' | '3';
  answer: AskAnswer;
  label: string;
  /** 3 on a tool call or a plan: the person says why, in the input line, before it is sent. */
  withReason?: boolean;
}

/** The choices a question offers, by what it is about. */
export function askChoices(request: ApprovalView): AskChoice[] {
  const who = request.agent;
  switch (request.tool) {
    case 'budget':
      return [
        { key: '1', answer: 'approve', label: 'extend the budget' },
        { key: '3', answer: 'deny', label: `stop ${who}` },
      ];
    case 'plan':
      return [
        { key: '1', answer: 'approve', label: 'approve the plan' },
        { key: '3', answer: 'deny', label: 'send it back, saying why', withReason: true },
      ];
    case 'trust':
      // Workspace settings that widen trust (docs/trust.md): no "always", the record is the always.
      return [
        { key: '1', answer: 'approve', label: 'trust them (from the next start)' },
        { key: '3', answer: 'deny', label: 'keep ignoring them' },
      ];
    case 'failed':
    case 'stalled':
      return [
        { key: '1', answer: 'approve', label: `restart ${who} (its workspace, tasks and a summary kept)` },
        { key: '3', answer: 'deny', label: 'dismiss' },
      ];
    default:
      return [
        { key: '1', answer: 'approve', label: 'yes' },
        ...(request.prefixes.length
          ? [{ key: '2' as const, answer: 'always' as const, label: `yes, and don't ask again for ${request.prefixes.map((p) => `'${p}'`).join(', ')}` }]
          : []),
        { key: '3', answer: 'deny', label: `no, and tell ${who} why`, withReason: true },
      ];
  }
}
