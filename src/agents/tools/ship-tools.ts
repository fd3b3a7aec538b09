// open_pull_request (docs/backlog.md#shipping): the lead asks, huddle's own process pushes the
// issue's branch and opens the pull request. The tool's input is an issue number, nothing more:
// which branch, which remote, which base and which credentials are huddle's to decide.
import * as z from 'zod';
import { defineTool, ToolError, type Tool } from '../../runtime/tools/types.js';
import type { Shipper } from '../team-context.js';

export function shipTools(ship: Shipper | undefined): Tool[] {
  if (!ship) return [];
  return [
    defineTool({
      name: 'open_pull_request',
      effects: ['external'],
      description:
        "Ship a backlog issue whose task is reviewed and approved: huddle pushes the issue's branch to the remote and opens its pull request (draft, then ready), with the plan and the review in its body. Without a GitHub repository the branch is pushed (if there is a remote) and merged later with huddle merge.",
      input: z.object({ issue: z.number().int().positive().describe('the issue number') }),
      summarize: (input) => `pull request for issue #${input.issue}`,
      run: async (input, ctx) => {
        try {
          return await ship.openPullRequest(input.issue, ctx.agent);
        } catch (error) {
          throw new ToolError((error as Error).message);
        }
      },
    }),
  ];
}
