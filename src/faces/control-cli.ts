// `huddle status [--json]`, `huddle send NAME TEXT`, `huddle interrupt NAME`, `huddle approvals`, `huddle approve`
// (docs/contract.md#command-line, docs/headless.md#plan-approval): a thin client of the control socket of the huddle
// process live in the workspace. Answers go through the live process, never the store: only it holds the waiting
// request, its teammate and its auto-approval timer. Exit codes: 0
// done, 1 the request could not be carried out (nothing to interrupt, the run failed it), 2 no
// huddle is live there or the request was wrong (an unknown agent).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { controlRequest, NoLiveHuddleError, type ControlRequest, type StatusReport, type WaitingLine } from '../session/control-endpoint.js';

export type ControlCommand =
  | { kind: 'status'; json: boolean }
  | { kind: 'send'; to: string; text: string }
  | { kind: 'interrupt'; agent: string }
  | { kind: 'approvals'; json: boolean }
  | { kind: 'approve'; id?: string | undefined; deny: boolean; message?: string | undefined; editFile?: string | undefined };

export async function runControlCommand(command: ControlCommand, cwd: string | undefined): Promise<number> {
  const root = path.resolve(cwd ?? process.cwd());
  let request: ControlRequest;
  if (command.kind === 'approve') {
    let edited: string | undefined;
    if (command.editFile !== undefined) {
      try {
        edited = readFileSync(path.resolve(command.editFile), 'utf8');
      } catch (error) {
        return fail(`cannot read the edited plan ${command.editFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 2);
      }
    }
    request = {
      op: 'approve',
      ...(command.id ? { id: command.id } : {}),
      ...(command.deny ? { deny: true } : {}),
      ...(command.message !== undefined ? { message: command.message } : {}),
      ...(edited !== undefined ? { edited } : {}),
    };
  } else
    request =
      command.kind === 'status'
        ? { op: 'status' }
        : command.kind === 'approvals'
          ? { op: 'approvals' }
          : command.kind === 'send'
            ? { op: 'send', to: command.to, text: command.text }
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
    case 'approvals': {
      const waiting = response.result as WaitingLine[];
      process.stdout.write(command.json ? `${JSON.stringify(waiting)}\n` : formatWaiting(waiting));
      return 0;
    }
    case 'approve': {
      const { answer } = response.result as { answer: string };
      process.stdout.write(`${answer}\n`);
      return answer === 'that request is no longer waiting' ? 1 : 0;
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

/** One block per waiting request: id, agent, kind, age, and the first lines of what waits. */
export function formatWaiting(waiting: WaitingLine[], now = Date.now()): string {
  if (!waiting.length) return 'nothing waits for you\n';
  return (
    waiting
      .map((w) => {
        const age = Math.max(0, Math.round((now - Date.parse(w.created_at)) / 1000));
        const head = `${w.id}  ${w.agent}  ${w.kind === 'tool' ? w.tool : w.kind}  ${age < 120 ? `${age} s` : `${Math.round(age / 60)} min`}`;
        const lines = (w.detail ?? w.summary)
          .split('\n')
          .slice(0, 3)
          .map((line) => `  ${line.length > 100 ? `${line.slice(0, 99)}…` : line}`);
        return [head, ...lines].join('\n');
      })
      .join('\n') + '\n'
  );
}

function fail(message: string, code: number): number {
  process.stderr.write(`huddle: ${message}\n`);
  return code;
}
