// The permission gate, per agent: before a tool that declares `shell`, `write` or `external` effects
// runs, the tool pipeline's permission step (agents/tools/tool-pipeline.ts) calls `check`, which applies
// the agent's permission mode (command-policy.ts) and, in ask mode, waits for the person through the
// approvals queue. Refusals are tool errors that say why and what to do, so the agent's loop goes on.
import path from 'node:path';
import type { Approvals } from '../store/approvals.js';
import type { AllowList, AllowListEntries } from '../store/allow-list.js';
import type { PermissionMode } from './permission-mode.js';
import type { Member } from '../store/roster.js';
import type { MemberStatus } from '../vocabulary.js';
import { checkCommand, denyMessage, protectedPathReason } from './command-policy.js';
import { sandboxStatus } from '../sandbox/status.js';
import { configPathReason, configRefusal, ownConfigDir } from '../workspace/config-paths.js';
import { PathEscapeError } from '../workspace/workspace.js';
import { oneLine } from '../tools/registry.js';
import { editDiff } from '../tools/edit-file.js';
import { ToolError, type ToolContext, type ToolEffect } from '../tools/types.js';
import { ruleVerdict, type ToolRuleLists } from './tool-rules.js';

export interface GateOptions {
  /** The team's workspace root; an agent whose root differs works in its own worktree. */
  teamRoot: string;
  /** Command prefixes the person allowed for good ("a" in the needs-you queue): settings' permissions.allow. */
  allowList: AllowList;
  approvals: Approvals;
  /** To show `waiting` (reason `permission: …`) while a call waits for the person. */
  roster?: {
    get(name: string): Member | undefined;
    setStatus(name: string, status: MemberStatus, extra?: { reason?: string; error?: string }): Promise<unknown>;
  };
  /** The run's mode as configured; undefined: ask when someone can answer (the console), else auto. */
  configuredMode: () => PermissionMode | undefined;
  /** Files the settings run (hook scripts, MCP server programs), absolute: never written by file tools. */
  configFiles?: (root: string) => readonly string[];
  /** Rules in Claude Code's syntax (settings' permissions.deny/ask, --disallowedTools): held against every call. */
  toolRules?: () => ToolRuleLists;
}

export class PermissionGate {
  readonly #options: GateOptions;
  readonly #modes = new Map<string, PermissionMode>();

  constructor(options: GateOptions) {
    this.#options = options;
  }

  /** The mode of agents without one of their own. */
  runMode(): PermissionMode {
    return this.#options.configuredMode() ?? (this.#options.approvals.answerable ? 'ask' : 'auto');
  }

  setMode(agent: string, mode: PermissionMode | undefined): void {
    if (mode) this.#modes.set(agent, mode);
    else this.#modes.delete(agent);
  }

  modeOf(agent: string): PermissionMode {
    return this.#modes.get(agent) ?? this.runMode();
  }

  /**
   * Resolves when a call with these effects may run; throws a ToolError saying why when it may not.
   * A `shell` tool's input has `command`, a `write` tool's `path` (and `content`, or `old_text` and `new_text`).
   */
  async check(tool: string, effects: readonly ToolEffect[], input: Record<string, unknown>, context: ToolContext): Promise<void> {
    if (effects.includes('shell')) await this.checkBash(String(input.command ?? ''), context);
    if (effects.includes('write')) await this.checkWrite(tool, String(input.path ?? ''), context, proposedChange(input));
    if (effects.includes('external')) await this.checkExternal(tool, input, context);
  }

  /**
   * The deny and ask rules (docs/configuration.md#permission-rules), for every tool in every mode: a
   * deny refuses the call, an ask puts it to the person even where the mode would not (refused when
   * nobody can answer). Allow rules are the allow-list's (checkBash, checkExternal).
   */
  async checkRules(tool: string, input: unknown, context: ToolContext): Promise<void> {
    const lists = this.#options.toolRules?.();
    if (!lists?.deny?.length && !lists?.ask?.length) return;
    const verdict = ruleVerdict({ deny: lists.deny, ask: lists.ask }, tool, input, context.workspace.root);
    if (!verdict) return;
    if (verdict.kind === 'deny')
      throw new ToolError(
        `refused: the permission rule '${verdict.rule}' (permissions.deny) forbids this ${tool} call. Do not retry it in another form; carry on without it.`,
      );
    await this.askPerson(context, {
      tool,
      summary: describeInput(input),
      reason: `the permission rule '${verdict.rule}' (permissions.ask) asks you to confirm this`,
      prefixes: [],
      headless: `${tool} needs approval (the permission rule '${verdict.rule}' in permissions.ask), which a headless run cannot ask for`,
    });
  }

  /** Resolves when the command may run; throws a ToolError saying why when it may not. */
  async checkBash(command: string, context: ToolContext): Promise<void> {
    const mode = this.modeOf(context.agent);
    // Only ask mode consults the allow-list (plan refuses and auto runs what it would allow): its
    // nine settings files are read afresh for an ask-mode check, and not at all for the others.
    const allow: AllowListEntries = mode === 'ask' ? this.#options.allowList.read() : { entries: [] };
    const ownWorktree = context.workspace.root !== this.#options.teamRoot;
    // Nothing but the sandbox keeps a worktree teammate out of the main checkout: without one,
    // it does not run unattended (HUDDLE_SANDBOX=off says the person accepts that).
    const sandbox = context.sandbox ?? sandboxStatus();
    if (ownWorktree && mode === 'auto' && !sandbox.available && !sandbox.onPurpose) {
      throw new ToolError(
        `refused: a worktree teammate runs commands in auto mode only inside the sandbox, and there is none (${sandbox.reason}). ` +
          'Install bubblewrap (apt-get install bubblewrap), run this teammate in ask mode, or set HUDDLE_SANDBOX=off to run unsandboxed on purpose',
      );
    }
    const verdict = checkCommand(command, {
      mode,
      root: context.workspace.root,
      ownWorktree,
      teamRoot: this.#options.teamRoot,
      allow: allow.entries,
    });
    if (verdict.kind === 'allow') return;
    if (verdict.kind === 'deny') throw new ToolError(denyMessage(verdict));
    if (verdict.kind === 'plan') {
      throw new ToolError(`refused in plan mode (read-only): ${verdict.reason}. ${planHint(context.agent)}`);
    }
    const note = allow.error ? ` (${allow.error})` : '';
    await this.#ask(
      context,
      'bash',
      oneLine(command, 200),
      `${verdict.reason}${note}`,
      verdict.prefixes,
      () =>
        `'${oneLine(command)}' needs approval, which a headless run cannot ask for; run with --permission-mode auto or add it to the allow-list ("permissions": {"allow": ["${verdict.prefixes[0] ?? 'npm test'}"]} in .team/settings.json or .team/settings.local.json)${note}`,
    );
  }

  /** For write_file and edit_file; `detail` shows the person what would change (a diff, the start of the file). */
  async checkWrite(tool: string, file: string, context: ToolContext, detail?: string): Promise<void> {
    const mode = this.#configRefusal(file, context);
    if (mode === 'plan') throw new ToolError(`refused in plan mode (read-only): ${tool} is not available. ${planHint(context.agent)}`);
    if (mode === 'auto') return;
    const root = context.workspace.root;
    const relative = path.relative(root, path.resolve(root, file));
    // A path outside the root is the tool's to refuse, with its own message.
    if (relative.startsWith('..') || path.isAbsolute(relative)) return;
    const why = protectedPathReason(relative);
    if (!why) return;
    await this.#ask(
      context,
      tool,
      relative,
      `${tool} ${relative}: ${why}`,
      [],
      () => `${tool} ${relative} needs approval (${why}), which a headless run cannot ask for; run with --permission-mode auto, or leave that file alone`,
      detail,
    );
  }

  /**
   * For a tool huddle cannot see into (an MCP tool its server does not mark read-only): refused in
   * plan mode, put to the person in ask mode unless the allow-list holds its name.
   */
  async checkExternal(tool: string, input: unknown, context: ToolContext): Promise<void> {
    const mode = this.modeOf(context.agent);
    if (mode === 'plan') {
      throw new ToolError(
        `refused in plan mode (read-only): ${tool} is not marked read-only by its MCP server (readOnlyHint), so it may change things. Say what it should do instead.`,
      );
    }
    if (mode !== 'ask' || this.isAllowListed(tool)) return;
    await this.askPerson(context, {
      tool,
      summary: describeInput(input),
      reason: `${tool}: an MCP tool its server does not mark read-only`,
      prefixes: [tool],
      headless: `${tool} needs approval (its MCP server does not mark it read-only), which a headless run cannot ask for; run with --permission-mode auto or add "${tool}" to "permissions": {"allow": […]} in .team/settings.local.json`,
    });
  }

  /** Configuration is refused in every mode (docs/trust.md); returns the agent's mode otherwise. */
  #configRefusal(file: string, context: ToolContext): PermissionMode {
    const { workspace } = context;
    const extra = this.#options.configFiles?.(workspace.root) ?? [];
    const spelled = path.resolve(workspace.root, file);
    let real = spelled;
    try {
      real = workspace.resolve(file);
    } catch (error) {
      // Outside the workspace: the tool refuses it with its own message.
      if (!(error instanceof PathEscapeError)) throw error;
    }
    const configDir = ownConfigDir();
    for (const where of [spelled, real]) {
      const why = configPathReason(workspace.root, where, extra, configDir);
      if (why) throw new ToolError(configRefusal(workspace.relative(where), why));
    }
    return this.modeOf(context.agent);
  }

  /**
   * Puts a call that is neither bash nor a file write to the person (an MCP tool its server does not
   * mark read-only, a hook's "ask"); resolves when approved, throws a ToolError saying why not.
   * `always` adds `prefixes` to the allow-list.
   */
  async askPerson(context: ToolContext, request: { tool: string; summary: string; reason: string; prefixes: string[]; headless: string }): Promise<void> {
    await this.#ask(context, request.tool, request.summary, request.reason, request.prefixes, () => request.headless);
  }

  /** Whether the allow-list holds exactly `name` (an MCP tool the person allowed for good). */
  isAllowListed(name: string): boolean {
    return this.#options.allowList.read().entries.includes(name);
  }

  async #ask(context: ToolContext, tool: string, summary: string, reason: string, prefixes: string[], headless: () => string, detail?: string): Promise<void> {
    const { approvals, roster } = this.#options;
    if (!approvals.answerable) throw new ToolError(headless());
    const before = roster?.get(context.agent);
    const waitingReason = `permission: ${oneLine(summary, 60)}`;
    // A status is best effort: the work goes on whether the roster took it or not.
    await roster?.setStatus(context.agent, 'waiting', { reason: waitingReason }).catch(() => undefined);
    let outcome;
    try {
      outcome = await approvals.request({ agent: context.agent, tool, summary, reason, prefixes, ...(detail ? { detail } : {}) }, context.signal);
    } finally {
      // Back to what it was (working), unless something else changed the status meanwhile.
      const now = roster?.get(context.agent);
      if (before && now?.status === 'waiting' && now.status_reason === waitingReason) {
        // A status is best effort: the work goes on whether the roster took it or not.
        await roster
          ?.setStatus(context.agent, before.status, before.status_reason !== undefined ? { reason: before.status_reason } : {})
          .catch(() => undefined);
      }
    }
    if (outcome.kind === 'approved') {
      if (outcome.always && prefixes.length) {
        try {
          await this.#options.allowList.add(prefixes);
        } catch (error) {
          context.events.emit('warning', { message: `approved once; could not add to the allow-list: ${(error as Error).message}` });
        }
      }
      return;
    }
    if (outcome.kind === 'unanswerable') throw new ToolError(headless());
    if (outcome.kind === 'cancelled') throw new ToolError('[interrupted] while waiting for approval');
    const said = outcome.kind === 'denied' && outcome.reason ? ` They said: ${oneLine(outcome.reason, 500)}.` : '';
    throw new ToolError(
      `the person denied this (${tool}: ${oneLine(summary)}).${said} Do not retry it in another form; carry on without it, or say why it is needed.`,
    );
  }
}

/** Lines of a proposed change shown with the question: the edit as a diff, or the start of a file to write. */
const PREVIEW_LINES = 12;

function proposedChange(input: Record<string, unknown>): string | undefined {
  const path = String(input.path ?? '');
  if (typeof input.old_text === 'string' && typeof input.new_text === 'string') {
    const diff = editDiff(path, input.old_text, input.new_text).split('\n');
    return diff.length > PREVIEW_LINES + 2
      ? [...diff.slice(0, PREVIEW_LINES + 2), `… ${diff.length - PREVIEW_LINES - 2} more lines`].join('\n')
      : diff.join('\n');
  }
  if (typeof input.content === 'string') {
    const lines = input.content.split('\n');
    const shown = lines.slice(0, PREVIEW_LINES).map((line) => `+${line}`);
    return [
      `+++ ${path} (${lines.length} line${lines.length === 1 ? '' : 's'})`,
      ...shown,
      ...(lines.length > PREVIEW_LINES ? [`… ${lines.length - PREVIEW_LINES} more lines`] : []),
    ].join('\n');
  }
  return undefined;
}

function planHint(agent: string): string {
  return `${agent} runs in plan mode: it may read and report, not change files; say what should change instead`;
}

/** The call's arguments in one line, for the needs-you queue. */
function describeInput(input: unknown): string {
  const json = JSON.stringify(input ?? {});
  return json === '{}' ? '(no arguments)' : oneLine(json, 200);
}
