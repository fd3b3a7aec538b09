// The team-cost benchmark's scripted Messages API (bench/team-cost.ts): every teammate claims a task,
// writes its file, completes it and reports to the lead, one call each; the lead answers each wake in
// one. Served by bench/children/team-cost-api.ts, in a process of its own.
import { reply, replyText, text, toolUse, type RecordedRequest, type Scripted } from '../test/helpers/fake-api.js';

/** Every teammate call answered after min–max ms (a realistic pace), or at once. */
export interface Pace {
  min: number;
  max: number;
}

type Turn = { role: string; content: string | Array<{ type: string; text?: string; name?: string }> };

/** The scripted teammate: claim → write_file → task_update → send_message → end; anything else: a short answer. */
export function respond(request: RecordedRequest, pace: Pace | undefined): Scripted {
  const delay = (s: Scripted): Scripted =>
    pace && s.kind === 'message' ? { ...s, delayMs: Math.round((pace.min + Math.random() * (pace.max - pace.min)) / 12) } : s;
  if (request.agent === 'lead') return replyText('Noted.');
  const messages: Turn[] = request.body?.messages ?? [];
  const last = messages.at(-1);
  const blocks = typeof last?.content === 'string' ? [{ type: 'text', text: last.content }] : (last?.content ?? []);
  const claimed = blocks.map((b) => /<auto-claimed>Task #(\d+)/.exec(b.text ?? '')?.[1]).find(Boolean);
  if (claimed) {
    const n = Number(claimed);
    const content = `// task ${n}\n${Array.from({ length: 30 }, (_, k) => `export const v${k} = ${n * 100 + k};`).join('\n')}\n`;
    return delay(reply(text(`Task ${n}: writing its file.`), toolUse('write_file', { path: `out/task-${n}.ts`, content })));
  }
  if (blocks.some((b) => b.type === 'tool_result')) {
    const previous = messages.at(-2);
    const used = typeof previous?.content === 'string' ? undefined : previous?.content.findLast((b) => b.type === 'tool_use')?.name;
    const task = Number(
      /Task (\d+)/.exec(JSON.stringify(messages.findLast((m) => m.role === 'assistant' && JSON.stringify(m).includes('writing its file'))))?.[1],
    );
    if (used === 'write_file') return delay(reply(toolUse('task_update', { task_id: task, status: 'completed' })));
    if (used === 'task_update') return delay(reply(toolUse('send_message', { to: 'lead', content: `Task #${task} done: out/task-${task}.ts written.` })));
    return delay(replyText(`Task ${task} is done and reported.`));
  }
  return delay(replyText('Ready for the board.'));
}
