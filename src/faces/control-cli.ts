// `huddle status [--json]`, `huddle send NAME TEXT`, `huddle interrupt NAME`, `huddle approve [ID] [--deny | --list]`
// (docs/contract.md#command-line): a
// thin client of the control socket of the huddle process live in the workspace. Exit codes: 0
// done, 1 the request could not be carried out (nothing to interrupt, the run failed it), 2 no
// huddle is live there or the request was wrong (an unknown agent).
import path from 'node:path';
import { controlRequest, NoLiveHuddleError, type ControlRequest, type StatusReport } from '../session/control-endpoint.js';

export type ControlCommand =
  | { kind: 'status'; json: boolean }
  | { kind: 'send'; to: string; text: string }
  | { kind: 'interrupt'; agent: string }
  | { kind: 'approve'; id: string | undefined; deny: boolean }
  | { kind: 'waiting'; json: boolean };

export async function runControlCommand(command: ControlCommand, cwd: string | undefined): Promise<number> {
  const root = path.resolve(cwd ?? process.cwd());
  const request: ControlRequest =
    command.kind === 'status'
      ? { op: 'status' }
      : command.kind === 'send'
        ? { op: 'send', to: command.to, text: command.text }
        : command.kind === 'approve'
          ? { op: 'approve', ...(command.id ? { id: command.id } : {}), deny: command.deny }
          : command.kind === 'waiting'
            ? { op: 'waiting' }
            : { op: 'interrupt', agent: command.agent };
  let response;
  try {
    response = await controlRequest(root, request, { timeoutMs: 30_000 });
  } catch (error) {
    if (error instanceof NoLiveHuddleError) return fail(error.message, 2);
    return fail(error instanceof Error ? error.message : String(error), 1);
  }
  if (!response.ok) return fail(response.error, response.code === 'usage' ? 2 : 1);
  switch (command.kind) {
    case 'status': {
      const report = response.result as StatusReport;
      process.stdout.write(command.json ? `${JSON.stringify(report)}\n` : formatStatus(report));
      return 0;
    }
    case 'send': {
      const { id } = response.result as { id: string };
      process.stdout.write(`sent to ${command.to} (${id})\n`);
      return 0;
    }
    case 'approve': {
      process.stdout.write(`${(response.result as { line: string }).line}\n`);
      return 0;
    }
    case 'waiting': {
      const waiting = response.result as Array<{ id: string; agent: string; summary: string }>;
      process.stdout.write(command.json ? `${JSON.stringify(waiting)}\n` : waiting.map((r) => `${r.id}  ${r.agent}: ${r.summary}\n`).join(''));
      return 0;
    }
    case 'interrupt': {
      const { interrupted } = response.result as { interrupted: boolean };
      if (!interrupted) return fail(`${command.agent} is not in a turn; nothing to interrupt`, 1);
      process.stdout.write(`interrupted ${command.agent}\n`);
      return 0;
    }
  }
}

/** One line per agent: name, role, status (and why), kind, task, cost, context. */
export function formatStatus(report: StatusReport): string {
  const rows = report.agents.map((a) => [
    a.name,
    a.role,
    a.reason ? `${a.status} (${a.reason})` : a.status,
    a.agent,
    a.task === undefined || a.task === null ? '-' : `#${a.task}`,
    `$${a.cost_usd.toFixed(4)}`,
    a.context_tokens ? `${Math.round(a.context_tokens / 1000)}k` : '-',
  ]);
  const header = ['NAME', 'ROLE', 'STATUS', 'AGENT', 'TASK', 'COST', 'CONTEXT'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [`huddle ${report.face} (pid ${report.pid}) in ${report.workspace}, team ${report.team}`, line(header), ...rows.map(line)].join('\n') + '\n';
}

function fail(message: string, code: number): number {
  process.stderr.write(`huddle: ${message}\n`);
  return code;
}
