// /workflows (docs/console.md#views): the workflow started from the console, live. A line for the run (its state,
// time, tokens and cost of its agents, the keys), then each phase in order with a row per step's agent: its state,
// task, tokens in/out, cost and time. ↑/↓ select an agent (the list scrolls to keep it in view).
import chalk from 'chalk';
import { Box, Text } from 'ink';
import { useEffect, useState } from 'react';
import { useStore } from 'zustand';
import type { AgentView, ConsoleStore } from '../state/console-store.js';
import type { PhaseView, StepState, WorkflowRunState } from '../../workflow/run-state.js';
import { formatTokens } from '../render/tokens.js';
import { padLine } from '../render/wrap.js';

/** Rows of /workflows that are not the list: the title, the run's line and the column headers. */
export const WORKFLOWS_CHROME_ROWS = 3;

const STEP_MARK: Record<StepState, string> = {
  queued: chalk.gray('·'),
  running: chalk.green('●'),
  restarting: chalk.yellow('↻'),
  done: chalk.green('✓'),
  reused: chalk.gray('✓'),
  failed: chalk.red('✗'),
  stopped: chalk.gray('■'),
};

/** "7s", "3m 04s", "1h 02m". */
export function formatSpan(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h ${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

function phaseLine(phase: PhaseView): string {
  if (phase.kind === 'gate') return `${chalk.bold(phase.name)}  gate: ${phase.gate ?? ''}  ${chalk.dim(phase.state)}`;
  const count = (state: StepState) => phase.steps.filter((step) => step.state === state).length;
  const done = count('done') + count('reused');
  const atWork = count('running') + count('restarting');
  const steps = phase.steps.length ? `${done}/${phase.steps.length} done${atWork ? ` · ${atWork} at work` : ''}` : 'steps from the phase before';
  return `${chalk.bold(phase.name)}  ${steps}  ${chalk.dim(`${phase.concurrency ?? '?'} at once · ${phase.state}`)}`;
}

/** The view's lines below its header, and which of them is the selected agent's. */
export function workflowRows(
  workflow: WorkflowRunState,
  agents: Record<string, AgentView | undefined>,
  selected: number,
  width: number,
  now: number,
): { header: string; lines: string[]; selectedLine: number } {
  const nameWidth = Math.min(32, Math.max(10, ...workflow.phases.flatMap((phase) => phase.steps.map((step) => step.agent.length + 4))));
  const widths = [nameWidth, 13, 7, 14, 9, 8];
  const cells = (values: string[]) => values.map((value, i) => (i < values.length - 1 ? `${padLine(value, widths[i]! - 1)} ` : value)).join('');
  const header = cells(['  agent', '  state', 'task', 'in/out', 'cost', 'time']);
  const lines: string[] = [];
  let selectedLine = 0;
  let index = 0;
  for (const phase of workflow.phases) {
    lines.push(padLine(phaseLine(phase), width));
    for (const step of phase.steps) {
      const agent = agents[step.agent];
      const time = step.startedAt ? formatSpan((step.endedAt ?? now) - step.startedAt) : '';
      const spent = agent && step.state !== 'queued' && step.state !== 'reused';
      const line = cells([
        `  ${step.agent}`,
        `${STEP_MARK[step.state]} ${step.state}`,
        step.task ? `#${step.task}` : '',
        spent ? `${formatTokens(agent.inputTokens)}/${formatTokens(agent.outputTokens)}` : '',
        spent ? `$${agent.costUsd.toFixed(3)}` : '',
        time,
      ]);
      if (index === selected) {
        selectedLine = lines.length;
        lines.push(chalk.inverse(padLine(line, width)));
      } else lines.push(line);
      index += 1;
    }
  }
  return { header, lines, selectedLine };
}

/** The run's line: state, time, tokens and cost of its agents (summed from their panes), and what the keys do. */
export function runLine(workflow: WorkflowRunState, agents: Record<string, AgentView | undefined>, now: number): string {
  const steps = workflow.phases.flatMap((phase) => phase.steps).filter((step) => step.state !== 'queued' && step.state !== 'reused');
  let input = 0;
  let output = 0;
  let cost = 0;
  for (const step of steps) {
    const agent = agents[step.agent];
    input += agent?.inputTokens ?? 0;
    output += agent?.outputTokens ?? 0;
    cost += agent?.costUsd ?? 0;
  }
  const state = workflow.state === 'waiting' ? chalk.yellow('waiting') : workflow.state === 'failed' ? chalk.red('failed') : workflow.state;
  const over = workflow.state === 'done' || workflow.state === 'failed' || workflow.state === 'stopped';
  const keys = over ? '' : ` · ${workflow.state === 'paused' ? 'p resumes' : 'p pauses'} · r restarts the selected agent · s stops`;
  return `${state} · ${formatSpan((workflow.endedAt ?? now) - workflow.startedAt)} · ${formatTokens(input)}/${formatTokens(output)} tokens · $${cost.toFixed(3)}${
    workflow.message && workflow.state !== 'done' ? ` · ${workflow.message}` : ''
  }${chalk.dim(keys)}`;
}

export function WorkflowsView({ store, width, height }: { store: ConsoleStore; width: number; height: number }) {
  const workflow = useStore(store, (state) => state.workflow);
  const agents = useStore(store, (state) => state.agents);
  const selected = useStore(store, (state) => state.workflowIndex);
  const now = useNow(1000, workflow !== undefined && workflow.endedAt === undefined);
  if (!workflow) {
    return (
      <Box flexDirection="column" height={height} overflow="hidden">
        <Text wrap="truncate">
          {chalk.bold('Workflows')}
          {chalk.dim(' · Esc closes')}
        </Text>
        <Text wrap="wrap">No workflow has run in this console: /workflow run FILE starts one (docs/workflows.md).</Text>
      </Box>
    );
  }
  const { header, lines, selectedLine } = workflowRows(workflow, agents, selected, width, now);
  const shown = Math.max(1, height - WORKFLOWS_CHROME_ROWS);
  // The selected agent stays in view: the list starts where it must for that, else at the top.
  const top = Math.max(0, Math.min(selectedLine - Math.floor(shown / 2), lines.length - shown));
  const visible = lines.slice(top, top + shown);
  const below = lines.length - top - visible.length;
  return (
    <Box flexDirection="column" height={height} overflow="hidden">
      <Text wrap="truncate">
        {chalk.bold(`Workflow ${workflow.name}`)}
        {chalk.dim(` · Esc closes${below > 0 ? ` · ↓ ${below} more` : ''}`)}
      </Text>
      <Text wrap="truncate">{runLine(workflow, agents, now)}</Text>
      <Text wrap="truncate">{chalk.dim(header)}</Text>
      <Text wrap="truncate">{visible.join('\n')}</Text>
    </Box>
  );
}

/** The time, refreshed once a second while the run goes on (its times grow). */
function useNow(intervalMs: number, ticking: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!ticking) return undefined;
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs, ticking]);
  return now;
}
