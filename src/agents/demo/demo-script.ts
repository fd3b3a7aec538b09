// The script of `huddle demo`: each agent's next response, decided from the request alone (who
// is asking, what the conversation holds so far), the same information a real model gets, so
// the script survives any order the agents run in.
import type { ModelRequest } from '../../runtime/model/model-client.js';
import { systemText } from '../../runtime/model/system-prompt.js';
import { LEAD_NAME } from '../../runtime/vocabulary.js';
import { Conversation, isReport, reportsOf, type InboxMessage, type ToolCall } from './conversation.js';
import { DEMO_TASKS, GREET_JS, GREET_TESTS, README, SUMMARY_HEADING, demoTaskFor } from './demo-tasks.js';

export const DEMO_TEAMMATES = [
  { name: 'alice', role: 'coder' },
  { name: 'bob', role: 'tester' },
] as const;

export interface ToolCallSpec {
  name: string;
  input: Record<string, unknown>;
}

/** One scripted response: text streamed first, then tool calls (none: the turn ends). */
export interface Step {
  text: string;
  tools?: ToolCallSpec[];
}

export function decide(request: ModelRequest): Step {
  const who = /^You are '([^']+)', role: ([^,]+), team:/m.exec(systemText(request.system));
  const name = who?.[1] ?? 'agent';
  const conversation = new Conversation(request.messages);
  return name === LEAD_NAME ? leadStep(conversation) : teammateStep(conversation, name);
}

function leadStep(c: Conversation): Step {
  const created = c.attempted('task_create');
  // The person's first prompt (whatever it says) starts the plan.
  if (c.last.prompt !== undefined && created.length === 0) return leadPlan();
  const next = leadProgress(c, created);
  if (c.last.prompt === undefined && next) return next;
  // Off-script input: explain, and carry on with the script so the demo never stalls.
  const why = explain(LEAD_NAME);
  return next ? { text: join(why.text, next.text), ...(next.tools ? { tools: next.tools } : {}) } : why;
}

/** The lead's next move from the state of the conversation, or undefined when it has nothing to do. */
function leadProgress(c: Conversation, created: ToolCall[]): Step | undefined {
  if (c.assistantTexts.some((t) => t.includes(SUMMARY_HEADING))) return undefined;
  const spawned = c.succeeded('spawn_teammate').map((k) => String(k.input.name));
  const asked = c.attempted('shutdown_request');
  const acked = new Set(c.inbox.filter((m) => m.type === 'shutdown_response' && m.approve).map((m) => m.from));
  const waitingFor = c.succeeded('shutdown_request').map((k) => String(k.input.teammate));
  if (asked.length > 0 && waitingFor.every((n) => acked.has(n))) return leadSummary(c);

  const reports = reportsOf(c.inbox);
  if (asked.length === 0 && created.length > 0 && reports.size >= created.length) {
    const names = spawned.length ? spawned : DEMO_TEAMMATES.map((t) => t.name);
    return {
      text: `All ${reports.size} tasks are done. Asking ${list(names)} to shut down.`,
      tools: names.map((teammate) => ({ name: 'shutdown_request', input: { teammate } })),
    };
  }
  if (created.length === 1) {
    // Task 1's real id, so the tests task is blocked by the right one.
    const first = Number(/#(\d+)/.exec(created[0]?.result?.text ?? '')?.[1] ?? 1);
    return {
      text: `Task #${first} is on the board. Adding the tests (blocked by #${first}) and the README.`,
      tools: [
        { name: 'task_create', input: { subject: GREET_TESTS.subject, description: GREET_TESTS.description, blockedBy: [first] } },
        { name: 'task_create', input: { subject: README.subject, description: README.description } },
      ],
    };
  }
  if (created.length > 1 && c.attempted('spawn_teammate').length === 0) {
    return {
      text: 'The board is ready. Spawning **alice** (coder) and **bob** (tester); they claim tasks as they unblock.',
      tools: DEMO_TEAMMATES.map((t) => ({
        name: 'spawn_teammate',
        input: {
          name: t.name,
          role: t.role,
          prompt:
            `You are ${t.name}, the ${t.role} of a tiny greeting library (greet.js, its tests, a README). ` +
            'Claim tasks from the board as they unblock; for each, write its file, mark it completed, ' +
            `report to ${LEAD_NAME} in one line, then call idle.`,
        },
      })),
    };
  }
  const justRan = new Set(c.last.results.map((k) => k.name));
  const news = inboxNews(c.last.inbox, reports.size, created.length);
  if (justRan.has('spawn_teammate')) {
    return { text: join(`${list(spawned)} ${spawned.length === 1 ? 'is' : 'are'} on it. I'll wait for their reports.`, news) };
  }
  if (justRan.has('shutdown_request')) return { text: join(news, 'Waiting for their confirmations.') };
  return news ? { text: news } : undefined;
}

function leadPlan(): Step {
  return {
    text: [
      "Here's the plan for a tiny greeting library:",
      '',
      '- `greet.js`: a `greet(name)` function',
      '- `greet.test.js`: tests with `node:assert` (after greet.js exists)',
      '- `README.md`: usage and how to run the tests',
      '',
      "I'll put these on the board, then spawn **alice** (coder) and **bob** (tester) to pick them up.",
    ].join('\n'),
    tools: [{ name: 'task_create', input: { subject: GREET_JS.subject, description: GREET_JS.description } }],
  };
}

function leadSummary(c: Conversation): Step {
  const byFile = new Map<string, string>();
  for (const report of reportsOf(c.inbox).values()) {
    const file = DEMO_TASKS.find((task) => report.content.includes(task.file))?.file;
    if (file && !byFile.has(file)) byFile.set(file, report.from);
  }
  const by = (file: string) => (byFile.has(file) ? ` (by ${byFile.get(file)})` : '');
  return {
    text: [
      SUMMARY_HEADING,
      '',
      'The greeting library is done:',
      '',
      `- \`greet.js\`: \`greet(name)\` returns \`Hello, <name>!\`${by('greet.js')}`,
      `- \`greet.test.js\`: 3 tests with \`node:assert\`${by('greet.test.js')}`,
      `- \`README.md\`: usage and how to test${by('README.md')}`,
      '',
      'Run the tests with `node greet.test.js`. The team has shut down.',
      '',
      'This was a scripted demo; set `ANTHROPIC_API_KEY` and run `huddle` in your own project for a real team.',
    ].join('\n'),
  };
}

/** One line about what new messages say, or '' when there is nothing to say. */
function inboxNews(messages: InboxMessage[], done: number, total: number): string {
  const lines: string[] = [];
  for (const m of messages) {
    if (m.type === 'shutdown_response') lines.push(m.approve ? `${m.from} has shut down.` : `${m.from} declined to shut down.`);
    else if (isReport(m)) lines.push(`**${m.from}**: ${m.content}`);
    else lines.push(`Noted from ${m.from}: ${m.content}`);
  }
  if (messages.some(isReport) && total > 0) lines.push(`${done} of ${total} tasks done; waiting for the rest.`);
  return lines.join('\n');
}

function teammateStep(c: Conversation, me: string): Step {
  const last = c.last;
  const shutdown = last.inbox.findLast((m) => m.type === 'shutdown_request' && typeof m.request_id === 'string');
  if (shutdown) {
    return {
      text: 'My work here is done. Shutting down.',
      tools: [{ name: 'shutdown_response', input: { request_id: shutdown.request_id, approve: true } }],
    };
  }
  if (last.autoClaim) return startTask(me, last.autoClaim, 'Claimed');
  const justRan = new Set(last.results.map((k) => k.name));
  if (justRan.has('task_list')) {
    const open = /claimable now: (.*)/.exec(last.results.find((k) => k.name === 'task_list')?.result?.text ?? '')?.[1];
    return {
      text: `${open ? `Claimable now: ${open}.` : 'Nothing is claimable yet.'} Going idle; the board hands me the next free task.`,
      tools: [{ name: 'idle', input: {} }],
    };
  }
  const current = c.lastAutoClaim;
  const task = current && demoTaskFor(current.subject);
  if (current && task && justRan.has('write_file') && task.check) {
    return { text: 'Written. Running the tests.', tools: [{ name: 'bash', input: { command: task.check, timeout_ms: 30_000 } }] };
  }
  if (current && task && (justRan.has('write_file') || justRan.has('bash'))) {
    let checked: string | undefined;
    if (justRan.has('bash')) {
      const ran = last.results.find((k) => k.name === 'bash')?.result;
      const out = ran?.text ?? '';
      // The result's is_error says whether the command failed (its text names a failing code only).
      checked = ran && !ran.isError ? 'passed' : (out.split('\n').find((l) => l.trim()) ?? 'no output');
    }
    const opener = checked === undefined ? 'Done.' : checked === 'passed' ? 'All tests pass.' : 'The tests fail.';
    return {
      text: `${opener} Marking #${current.id} completed and reporting to ${LEAD_NAME}.`,
      tools: [
        { name: 'task_update', input: { task_id: current.id, status: 'completed' } },
        { name: 'send_message', input: { to: LEAD_NAME, content: task.report(current.id, checked) } },
        { name: 'idle', input: {} },
      ],
    };
  }
  if (c.assistantTexts.length === 0 && last.prompt !== undefined) {
    const role = DEMO_TEAMMATES.find((t) => t.name === me)?.role;
    return { text: `Hi, ${me} here${role ? ` (${role})` : ''}. Checking the board.`, tools: [{ name: 'task_list', input: {} }] };
  }
  // Off-script (a person typed, or an Esc cut the task short): explain, then finish an open task.
  const open = current && !c.calls.some((k) => k.name === 'task_update' && Number(k.input.task_id) === current.id && k.input.status === 'completed');
  if (current && task && open) {
    const resume = startTask(me, current, 'Back to');
    return { text: join(explain(me).text, resume.text), ...(resume.tools ? { tools: resume.tools } : {}) };
  }
  return explain(me);
}

/** Work on a claimed task starts by writing its file. */
function startTask(me: string, claim: { id: number; subject: string }, opener: string): Step {
  const task = demoTaskFor(claim.subject);
  if (!task) return explain(me, `I only know the greeting-library tasks, so I'm leaving #${claim.id} as it is.`);
  const then = task.check ? `, then running \`${task.check}\`` : '';
  return {
    text: `${opener} #${claim.id} (${claim.subject}). Writing \`${task.file}\`${then}.`,
    tools: [{ name: 'write_file', input: { path: task.file, content: task.content(me) } }],
  };
}

/** The answer to anything off-script (a person typing to an agent, say). */
function explain(agent: string, extra?: string): Step {
  const what =
    agent === LEAD_NAME
      ? 'I can only play my part: plan a tiny greeting library, spawn alice and bob, collect their reports and shut the team down.'
      : 'I can only play my part: claim a task from the board, write its file, report to the lead and go idle.';
  const text = join(
    `Thanks! This is huddle's **scripted demo**, so no model is reading this. ${what}`,
    extra ?? '',
    'For a real team, set `ANTHROPIC_API_KEY` and run `huddle` in your project.',
  );
  return agent === LEAD_NAME ? { text } : { text, tools: [{ name: 'idle', input: {} }] };
}

function list(names: readonly string[]): string {
  return names.length <= 1 ? (names[0] ?? 'nobody') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

function join(...parts: string[]): string {
  return parts.filter(Boolean).join('\n\n');
}
