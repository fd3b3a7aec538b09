// The one schema every settings source is checked against (docs/contract.md#settings-files): the user's, the team's
// (.team/settings.json), the personal one (.team/settings.local.json), .mcp.json, and what environment
// variables and flags set. The descriptions here are the user's documentation: the settings
// reference (docs/configuration.md#settings-reference) and the exported JSON Schema (settings.schema.json) are generated from them.
import * as z from 'zod';
import { PERMISSION_MODES } from '../permissions/permission-mode.js';
import { AGENT_KINDS, type AgentKind } from '../vocabulary.js';
import { isNetworkEntry } from '../sandbox/network-rules.js';
import { isToolRule } from '../permissions/tool-rules.js';

// zod compiles a parser for each object schema the first time it is parsed (new Function): that costs
// more than it saves when, as here, each schema is parsed a handful of times per process, and every
// huddle start parses the settings schema first thing. Off for the whole process (results are the same).
z.config({ jitless: true });

// The descriptions and defaults go to zod's global registry (what the JSON Schema and the settings reference are
// made from) with register(), on the schema just built: zod's describe() and meta() each build a copy of the schema
// to hang them on, ~140 schemas here built for nothing at every start, before the first settings file is checked.
// register() overwrites a schema's own entry: one call per schema, with all of its metadata.
const docs = z.globalRegistry;

// What the helpers below are made of, built once (every chained call builds a schema: z.number().int().min(0) is
// five). Each field takes a copy of its own (clone(): one schema, what describe() made) to register its text on;
// the shared ones never get metadata.
const nonNegativeInt = z.number().int().min(0);
const positiveInt = z.number().int().min(1);
const fraction = z.number().min(0).max(1);
const nonEmptyString = z.string().min(1);
const anyString = z.string();

const count = (text: string) => nonNegativeInt.clone().register(docs, { description: text });
const positive = (text: string) => positiveInt.clone().register(docs, { description: text });
/** A share of the context window: 0.8 is 80 %; 0 turns the feature off. */
const share = (text: string) => fraction.clone().register(docs, { description: text });
const strings = (text: string) => z.array(nonEmptyString).register(docs, { description: text });
const stringMap = (text: string) => z.record(anyString, anyString).register(docs, { description: text });
const toolRules = (text: string) =>
  z
    .array(z.string().min(1).refine(isToolRule, 'not a tool rule: Tool or Tool(specifier), e.g. "Bash(git push:*)", "Read(./.env)"'))
    .register(docs, { description: text });

// ---- budgets (the old .team/budget.json) ----------------------------------------------------------
const budgetLimits = z
  .strictObject({
    usd: z.number().positive().optional().register(docs, { description: 'Dollars, priced from the model price table.' }),
    minutes: z.number().positive().optional().register(docs, { description: 'Wall-clock minutes since the run started.' }),
    turns: z.number().int().positive().optional().register(docs, { description: 'Model calls.' }),
  })
  .register(docs, { description: 'Hard limits; any left out is unlimited.' });

const budget = z
  .strictObject({
    team: budgetLimits.optional().register(docs, { description: 'Limits for the whole team together.' }),
    agents: z.record(z.string(), budgetLimits).optional().register(docs, { description: 'Limits per agent name; "*" applies to every agent not named.' }),
    soft: share('Fraction of a limit at which to warn once (0 or 1: never).').optional().register(docs, { default: 0.8 }),
    step: budgetLimits.optional().register(docs, { description: 'What one extension adds per kind (default: the limit again).' }),
  })
  .register(docs, {
    description: 'Budgets in dollars, minutes and model calls. At a limit an agent pauses until the person extends it; headless runs stop with exit code 3.',
  });

// ---- MCP servers (Claude Code's .mcp.json format) ----------------------------------------------------
const stdioServer = z
  .strictObject({
    type: z.literal('stdio').optional().register(docs, { description: 'Optional; a server with `command` is a stdio server.' }),
    command: z.string().min(1).register(docs, { description: 'The program to start; ${VAR} and ${VAR:-default} are expanded.' }),
    args: strings('Its arguments (expanded like command).').optional(),
    env: stringMap('Extra environment variables for it (values expanded).').optional(),
  })
  .register(docs, { description: 'A server huddle starts as a child process and talks to over stdin/stdout.' });

const httpServer = z
  .strictObject({
    type: z.enum(['http', 'sse']).register(docs, { description: '"http" (streamable HTTP) or "sse" (the older HTTP+SSE transport).' }),
    url: z.string().min(1).register(docs, { description: 'The server URL (expanded).' }),
    headers: stringMap('HTTP headers, e.g. {"Authorization": "Bearer ${TOKEN}"} (values expanded).').optional(),
  })
  .register(docs, { description: 'A server huddle reaches over HTTP.' });

export const mcpServerSchema = z.union([stdioServer, httpServer]);
export type McpServerSettings = z.infer<typeof mcpServerSchema>;

const mcpServers = z.record(z.string().min(1), mcpServerSchema).register(docs, {
  description: 'MCP servers by name, as in .mcp.json; their tools reach agents as mcp__<server>__<tool>. A name here replaces the same name from .mcp.json.',
});

const mcp = z
  .strictObject({
    startupTimeoutMs: positive('How long a server may take to start and list its tools.').optional().register(docs, { default: 30_000 }),
    toolTimeoutMs: positive('How long one MCP tool call may take.').optional().register(docs, { default: 600_000 }),
    disabled: strings('Servers (from .mcp.json or settings) not to start.').optional(),
  })
  .register(docs, { description: 'How huddle runs MCP servers.' });

// ---- hooks (Claude Code's schema) ----------------------------------------------------------------
export const HOOK_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'UserPromptSubmit',
  'Stop',
  'SessionStart',
  'SessionEnd',
  'PreCompact',
  'Notification',
  'TeammateIdle',
  'TaskCompleted',
] as const;
export type HookEventName = (typeof HOOK_EVENTS)[number];

const hookCommand = z.strictObject({
  type: z.literal('command').register(docs, { description: 'Only "command" hooks are run.' }),
  command: z.string().min(1).register(docs, { description: "A shell command (bash -c), run in the agent's workspace with the event as JSON on stdin." }),
  timeout: z.number().positive().optional().register(docs, { description: 'Seconds before the hook and everything it started are killed.', default: 60 }),
  vocabulary: z.enum(['huddle', 'claude-code']).optional().register(docs, {
    description:
      'The tool names and input fields on its stdin: "huddle" (bash, write_file {path}) or "claude-code" (Bash, Write {file_path}). Default: huddle in huddle\'s files, claude-code in .claude/ files.',
  }),
});

const hookMatcher = z.strictObject({
  matcher: z
    .string()
    .optional()
    .register(docs, { description: 'For tool events, a tool name ("bash"), names joined by | or a regex ("mcp__.*"); empty or "*": every tool.' }),
  hooks: z.array(hookCommand).register(docs, { description: 'Commands to run, in parallel, when the matcher matches.' }),
});
export type HookMatcherSettings = z.infer<typeof hookMatcher>;

const hooks = z
  .strictObject(
    Object.fromEntries(HOOK_EVENTS.map((event) => [event, z.array(hookMatcher).optional()])) as Record<
      HookEventName,
      z.ZodOptional<z.ZodArray<typeof hookMatcher>>
    >,
  )
  .register(docs, {
    description:
      "Commands run at points of an agent's work, in Claude Code's hooks format. Exit 0 continues; exit 2 blocks where the event can be blocked, with stderr as the reason. Hooks from every settings file run.",
  });
export type HooksSettings = z.infer<typeof hooks>;

// ---- verify gates, sandbox, notifications ---------------------------------------------------------
const verify = z
  .strictObject({
    command: z.string().min(1).optional().register(docs, { description: "Run before any task may be completed (a task's own `verify` wins); it must exit 0." }),
    timeoutMs: positive('How long a verify command may run.').optional().register(docs, { default: 600_000 }),
    roles: stringMap('A verify command per role, over `command`.').optional(),
  })
  .register(docs, {
    description: "Verify gates: a task becomes completed only when its verify command exits 0 in the completing agent's workspace.",
  });

/** Host names, `*.domain`, `*`, `localhost`, addresses in any spelling, CIDR ranges (network-rules.ts). */
const networkList = (text: string) =>
  z
    .array(
      z
        .string()
        .min(1)
        .refine((entry) => isNetworkEntry(entry), 'not a host name, *.domain, address or CIDR range (e.g. "10.0.0.0/8")'),
    )
    .register(docs, { description: text });

const sandbox = z
  .strictObject({
    enabled: z.boolean().optional().register(docs, { description: 'false runs commands unsandboxed (HUDDLE_SANDBOX=off).', default: true }),
    network: z
      .strictObject({
        enabled: z
          .boolean()
          .optional()
          .register(docs, { description: "false: commands get no network at all (nor the host's abstract Unix sockets).", default: true }),
        allow: networkList(
          'Hosts commands may reach: names ("registry.npmjs.org"), "*.github.com", "localhost", addresses, CIDR ranges ("10.0.0.0/8"). A name allowed by name never reaches this machine.',
        ).optional(),
        deny: networkList('Hosts commands may never reach, checked by address ("localhost" is all of 127.0.0.0/8, ::1, 0.0.0.0); wins over allow.').optional(),
      })
      .optional()
      .register(docs, {
        description: "Network access of sandboxed commands; with allow or deny, their only way out is huddle's filtering proxy (needs socat).",
      }),
    writablePaths: strings("Extra paths sandboxed commands may write (besides the agent's workspace and TMPDIR).").optional(),
    caches: strings('Cache directories shared by sandboxed commands (~/.npm, ~/.cache/pip…).').optional(),
    hidden: strings('More paths sandboxed commands may not read (absolute or ~/…), besides where credentials live.').optional(),
  })
  .register(docs, { description: 'The OS sandbox every command an agent causes runs in (docs/contract.md#sandbox).' });

export const NOTIFY_KINDS = ['approval', 'plan', 'budget', 'failure', 'done', 'question'] as const;
export type NotifyKind = (typeof NOTIFY_KINDS)[number];

const notifications = z
  .strictObject({
    bell: z.boolean().optional().register(docs, { description: 'Ring the terminal bell.', default: true }),
    desktop: z.enum(['auto', 'osc9', 'osc777', 'off']).optional().register(docs, {
      description:
        'Desktop notifications through the terminal: OSC 9 (iTerm2, WezTerm, Windows Terminal, kitty, Ghostty), OSC 777 (urxvt, foot, VTE), auto picks by terminal.',
      default: 'auto',
    }),
    events: z
      .array(z.enum(NOTIFY_KINDS))
      .optional()
      .register(docs, { description: 'What notifies: approval, plan, budget, failure, done, question.', default: [...NOTIFY_KINDS] }),
    title: z.boolean().optional().register(docs, { description: 'Show "needs you: N" in the terminal tab title.', default: true }),
    webhook: z
      .strictObject({
        url: z
          .string()
          .regex(/^https?:\/\//i, 'an http:// or https:// URL')
          .register(docs, {
            description:
              'POST each notification as JSON {text, event, team, agent, …} here (a Slack-style incoming webhook); the URL may hold a token: it is never logged or shown.',
          }),
      })
      .optional()
      .register(docs, { description: 'A webhook that gets the same notifications as the terminal and the Notification hooks, headless too.' }),
  })
  .register(docs, {
    description: "How huddle gets the person's attention when something needs them; a Notification hook can send it anywhere else.",
  });

// ---- plan approval ----------------------------------------------------------------------------------
export const PLAN_APPROVERS = ['lead', 'person', 'auto-after'] as const;
export type PlanApprover = (typeof PLAN_APPROVERS)[number];

const plans = z
  .strictObject({
    approver: z.enum(PLAN_APPROVERS).optional().register(docs, {
      description:
        "Who approves plan-mode teammates' plans: lead (the default); person (the needs-you queue, huddle approve); or auto-after: the person, and if nobody answers within autoApproveMinutes, huddle approves it (from a workspace file, auto-after needs your trust).",
    }),
    autoApproveMinutes: z.number().positive().optional().register(docs, {
      description: 'auto-after: minutes a plan waits for the person before huddle approves it (fractions allowed: 0.5 is 30 s).',
      default: 30,
    }),
  })
  .register(docs, { description: 'Plan approval (docs/headless.md#plan-approval).' });

// ---- roles and external agents ----------------------------------------------------------------------
// The kinds are shared words (the console's /best-of reads them without loading this schema).
export { AGENT_KINDS, type AgentKind };

const roleOverride = z
  .strictObject({
    model: z.string().min(1).optional().register(docs, { description: 'Model for agents of this role.' }),
    permissionMode: z.enum(PERMISSION_MODES).optional().register(docs, { description: 'plan, ask or auto.' }),
    planModeRequired: z.boolean().optional().register(docs, { description: 'Teammates of this role send a plan before they work.' }),
    worktree: z.boolean().optional().register(docs, { description: 'Teammates of this role get their own git worktree.' }),
    maxTurns: positive('Model calls per turn.').optional(),
    tools: strings('The only tools agents of this role get; may name MCP tools as mcp__server__tool, mcp__server__* or mcp__server.').optional(),
    denyTools: strings('Tools agents of this role never get (same patterns as tools).').optional(),
    agent: z
      .enum(['huddle', ...AGENT_KINDS])
      .optional()
      .register(docs, { description: 'Which agent runs this role: huddle (in-process) or an external CLI.' }),
  })
  .register(docs, { description: 'Settings for one role (the lead\'s role is "lead"); they win over the role file\'s front matter.' });
export type RoleOverride = z.infer<typeof roleOverride>;

const externalAgent = z.strictObject({
  command: z.string().min(1).register(docs, { description: 'The program.' }),
  args: strings('Its arguments.').optional(),
  env: stringMap('Extra environment variables.').optional(),
});

const agents = z
  .strictObject(Object.fromEntries(AGENT_KINDS.map((kind) => [kind, externalAgent.optional()])) as Record<AgentKind, z.ZodOptional<typeof externalAgent>>)
  .register(docs, { description: 'How to start each kind of external agent CLI.' });

// ---- the whole file -------------------------------------------------------------------------------
export const settingsSchema = z
  .strictObject({
    $schema: z.string().optional().register(docs, { description: 'The JSON Schema, for editors (huddle ignores it).' }),
    model: z
      .string()
      .min(1)
      .optional()
      .register(docs, { description: 'The model every agent uses unless its role or spawn says otherwise.', default: 'claude-sonnet-4-6' }),
    maxTokens: positive('Output tokens per model response.').optional().register(docs, { default: 8192 }),
    maxTurns: positive('Model calls one agent may make for one user turn.').optional().register(docs, { default: 50 }),
    permissionMode: z.enum(PERMISSION_MODES).optional().register(docs, {
      description: 'plan (read only), ask (commands off the allow-list wait for the person) or auto. Unset: ask in the console, auto headless.',
    }),
    planApproval: z.enum(PLAN_APPROVERS).optional().register(docs, { description: 'The older spelling of plans.approver (plans.approver wins).' }),
    plans: plans.optional(),
    worktrees: z.boolean().optional().register(docs, { description: 'Every teammate gets its own git worktree unless spawned otherwise.', default: false }),
    freshContextPerTask: z.boolean().optional().register(docs, {
      description:
        'A teammate starts each task it takes from the board from a fresh context: its identity, role, spawn assignment, the task and a short memory of its earlier tasks (what it did, files written), not its whole transcript. false keeps one growing conversation.',
      default: true,
    }),
    reviewMaxRounds: count('Times a reviewer may send a task back before the lead decides.').optional().register(docs, { default: 3 }),
    timeouts: z
      .strictObject({
        idleMs: count('An idle teammate with nothing to do shuts down after this long.').optional().register(docs, { default: 60_000 }),
        stallMs: count('A working agent with no event for this long is interrupted (0: never).').optional().register(docs, { default: 600_000 }),
        requestMs: count('One model request may take this long.').optional().register(docs, { default: 600_000 }),
        streamIdleMs: count('A response stream silent this long counts as cut and is retried.').optional().register(docs, { default: 60_000 }),
        leadCoalesceMs: count(
          "Reports arriving close together wake the lead once: it reads its inbox once no new message came for this long and no teammate is still working on a task (eight times it at most, thirty while every message reports finished work; at once when no teammate works or waits); the person's prompts never wait (0: at once).",
        )
          .optional()
          .register(docs, { default: 1_000 }),
        cacheWarmupMs: count(
          "Teammates of one role share a prompt-cache prefix (tools and the role's system block): while one's call writes it, a sibling's call waits for that write, this long at most, then reads it (0: never waits).",
        )
          .optional()
          .register(docs, { default: 10_000 }),
        leaseMs: positive(
          'A team on PostgreSQL: a worker that has not renewed its lease for this long loses its teammates (failed, their tasks back on the board); a lead, its hold on the team.',
        )
          .optional()
          .register(docs, { default: 10_000 }),
      })
      .optional()
      .register(docs, { description: 'Timeouts in milliseconds.' }),
    retries: z
      .strictObject({
        max: count('Retries of a failed model call (429, 529, 5xx, dropped connections).').optional().register(docs, { default: 6 }),
        baseMs: count('First backoff; it doubles each retry, honouring retry-after.').optional().register(docs, { default: 500 }),
      })
      .optional()
      .register(docs, { description: 'Model call retries.' }),
    maxConcurrentCalls: count(
      "Model calls in flight at once for the whole team (0: no cap). The rest wait their turn, shown as 'queued' in the agent's status; a 429 or 529 makes every agent's next call wait out its retry-after.",
    )
      .optional()
      .register(docs, { default: 8 }),
    context: z
      .strictObject({
        trimAt: share('Above this share of the context window, old tool results are cut to stubs (0: never).').optional().register(docs, { default: 0.6 }),
        trimKeepTurns: count('Tool results of this many latest assistant turns are never cut.').optional().register(docs, { default: 3 }),
        compactAt: share('At this share of the context window the transcript is summarised (0: never).').optional().register(docs, { default: 0.8 }),
      })
      .optional()
      .register(docs, { description: 'Context management.' }),
    memory: z
      .strictObject({
        maxChars: positive('Characters of CLAUDE.md/AGENTS.md (with imports) an agent gets; the rest is cut with a note.')
          .optional()
          .register(docs, { default: 40_000 }),
      })
      .optional()
      .register(docs, { description: 'Project instructions (CLAUDE.md, AGENTS.md) given to every agent.' }),
    budget: budget.optional(),
    team: z
      .string()
      .regex(/^postgres(ql)?:\/\//i, 'a postgres:// URL')
      .optional()
      .register(docs, {
        description:
          "Keep the team's shared state in PostgreSQL instead of files: postgres://USER@HOST:PORT/DATABASE?team=NAME (team: default the workspace directory's name).",
      }),
    postgres: z
      .strictObject({
        pollSeconds: positive(
          'Every wait on a team on PostgreSQL also re-reads the team this often: NOTIFY wakes it at once, this is the floor when a notification is lost (or never sent, behind a transaction pooler).',
        )
          .optional()
          .register(docs, { default: 5 }),
        poolSize: positive("Connections each process keeps in its pool to the team's database (besides one that listens and one that renews its lease).")
          .optional()
          .register(docs, { default: 12 }),
        pooler: z.enum(['none', 'session', 'transaction']).optional().register(docs, {
          description:
            'What sits between huddle and the server: none; a session-mode pooler (no startup parameters are sent); or a transaction-mode pooler such as PgBouncer pool_mode=transaction (no startup parameters, no prepared statements, no LISTEN: changes are found by polling every pollSeconds).',
          default: 'none',
        }),
      })
      .optional()
      .register(docs, { description: 'A team on PostgreSQL (team): how each process uses the database.' }),
    retentionDays: count(
      'A team on PostgreSQL: teams archived by --fresh are deleted from the database this many days after (when a lead opens a team there, and the default of huddle prune; 0: kept until pruned).',
    )
      .optional()
      .register(docs, { default: 30 }),
    permissions: z
      .strictObject({
        allow: strings('Command prefixes that run without asking in ask mode ("npm install", "make").').optional(),
        deny: toolRules(
          'Calls never run, in any mode, in Claude Code\'s rule syntax: "Bash(rm:*)", "Read(./secrets/**)", "Edit(src/**)", "mcp__server__tool".',
        ).optional(),
        ask: toolRules('Calls put to the person in every mode (refused when nobody can answer), same syntax; deny wins over ask, ask over allow.').optional(),
      })
      .optional()
      .register(docs, { description: 'Permissions; lists from every settings file are joined.' }),
    env: stringMap("Environment variables set for the session: its commands, hooks and MCP servers (as Claude Code's settings `env`).").optional(),
    mcpServers: mcpServers.optional(),
    mcp: mcp.optional(),
    hooks: hooks.optional(),
    verify: verify.optional(),
    sandbox: sandbox.optional(),
    notifications: notifications.optional(),
    roles: z.record(z.string().min(1), roleOverride).optional().register(docs, { description: 'Settings per role name.' }),
    agents: agents.optional(),
  })
  .register(docs, { title: 'huddle settings', description: 'Settings of huddle, the terminal team console for AI coding agents.' });

export type Settings = z.infer<typeof settingsSchema>;

/** The shape of .mcp.json (Claude Code's format). */
export const mcpFileSchema = z.strictObject({ mcpServers: mcpServers.optional() });
