// The numbered choices a question for the person offers (1, 2(, 3) without gaps; the last is the no), by
// what it is about: data the keys answer with (keys/intents.ts) and the ask box draws (components/ask-box.ts).
import type { ApprovalView } from './console-store.js';

export type AskAnswer = 'approve' | 'always' | 'deny';

export interface AskChoice {
  /** Numbered from 1 without gaps, in the order shown; the last one is always the no. */
  key: '1' | '2' | '3';
  answer: AskAnswer;
  label: string;
  /** 3 on a tool call or a plan: the person says why, in the input line, before it is sent. */
  withReason?: boolean;
}

/** The choices a question offers, by what it is about, numbered 1, 2(, 3) in order. */
export function askChoices(request: ApprovalView): AskChoice[] {
  const keys = ['1', '2', '3'] as const;
  return unnumbered(request).map((choice, i) => ({ ...choice, key: keys[i]! }));
}

function unnumbered(request: ApprovalView): Array<Omit<AskChoice, 'key'>> {
  const who = request.agent;
  switch (request.tool) {
    case 'budget':
      return [
        { answer: 'approve', label: 'extend the budget' },
        { answer: 'deny', label: `stop ${who}` },
      ];
    case 'plan':
      return [
        { answer: 'approve', label: 'approve the plan' },
        { answer: 'deny', label: 'send it back, saying why', withReason: true },
      ];
    case 'trust':
      // Workspace settings that widen trust (docs/trust.md): no "always", the record is the always.
      return [
        { answer: 'approve', label: 'trust them (from the next start)' },
        { answer: 'deny', label: 'keep ignoring them' },
      ];
    case 'failed':
    case 'stalled':
      return [
        { answer: 'approve', label: `restart ${who}` },
        { answer: 'deny', label: 'dismiss' },
      ];
    default:
      return [
        { answer: 'approve', label: 'yes' },
        ...(request.prefixes.length
          ? [{ answer: 'always' as const, label: `yes, and don't ask again for ${request.prefixes.map((p) => `'${p}'`).join(', ')}` }]
          : []),
        { answer: 'deny', label: `no, and tell ${who} why`, withReason: true },
      ];
  }
}
