// best_of_verdict (docs/best-of.md#the-reviewers-verdict): the reviewer of a best-of-N run gives its
// verdict on the candidates as data (a score and notes for each, the one it would merge), not prose
// that huddle would have to read. Only the reviewer named by the run gets the tool.
import * as z from 'zod';
import { defineTool, ToolError, type Tool } from '../../runtime/tools/types.js';
import type { VerdictReceiver } from '../team-context.js';

export const VERDICT_TOOL = 'best_of_verdict';

const verdictInput = z.object({
  pick: z.string().describe("the candidate to merge (its name, e.g. best1-2), or 'none' when no candidate should be merged"),
  reason: z.string().min(1).describe('why that one, in a sentence or two'),
  candidates: z
    .array(
      z.object({
        name: z.string(),
        score: z.number().min(0).max(10).describe('0 (unusable) to 10 (merge as it is)'),
        notes: z.string().describe('what is good and what is wrong, in one or two sentences'),
      }),
    )
    .min(1)
    .describe('every candidate, each once'),
});

export type VerdictInput = z.infer<typeof verdictInput>;

export function verdictTools(receiver: VerdictReceiver | undefined, agent: string | undefined): Tool[] {
  if (!receiver || !agent || !receiver.accepts(agent)) return [];
  return [
    defineTool({
      name: VERDICT_TOOL,
      effects: ['board'],
      description:
        "Give your verdict on the best-of-N candidates you compared: a score and notes for every candidate, and the one to merge ('none' if none should be). Call it once, then end your turn.",
      input: verdictInput,
      summarize: (input) => `verdict: ${input.pick}`,
      run: (input, ctx) => {
        const problem = receiver.record(input, ctx.agent);
        if (problem) throw new ToolError(problem);
        return Promise.resolve(`verdict recorded: ${input.pick === 'none' ? 'no candidate' : input.pick} to merge`);
      },
    }),
  ];
}
