// Command-line flags that set settings: the highest layer. The CLI has already checked their form
// (src/cli.ts); each flag is its own layer so `/config` names it.
import type { PermissionMode } from '../permissions/permission-mode.js';
import { layerAt, type SettingsLayer } from './layers.js';
import type { PlanApprover } from './schema.js';

/** The settings part of the CLI's options (a subset of CliOptions, so the CLI's object fits as is). */
export interface SettingsFlags {
  model?: string | undefined;
  maxTurns?: number | undefined;
  permissionMode?: PermissionMode | undefined;
  budget?: { usd?: number | undefined; minutes?: number | undefined; turns?: number | undefined } | undefined;
  /** --team URL: the team's state in PostgreSQL. */
  team?: string | undefined;
  /** --disallowedTools: deny rules in Claude Code's syntax. */
  disallowedTools?: string[] | undefined;
  /** --mcp-config: MCP servers in .mcp.json's format, one layer per file or JSON given. */
  mcpConfig?: Array<{ label: string; servers: Record<string, unknown> }> | undefined;
  /**
   * What a face chose for this run, lowest first: a backlog run's playbook, then its --plan-approval
   * (docs/playbooks.md#plan-approval). Each is a layer named by its label.
   */
  runChoices?: RunChoice[] | undefined;
}

export interface RunChoice {
  label: string;
  approver?: PlanApprover | undefined;
  autoApproveMinutes?: number | undefined;
  reviewMaxRounds?: number | undefined;
}

export function flagLayers(flags: SettingsFlags): SettingsLayer[] {
  const layers: SettingsLayer[] = [];
  if (flags.model !== undefined) layers.push(layerAt('--model', ['model'], flags.model));
  if (flags.maxTurns !== undefined) layers.push(layerAt('--max-turns', ['maxTurns'], flags.maxTurns));
  if (flags.team !== undefined) layers.push(layerAt('--team', ['team'], flags.team));
  if (flags.permissionMode !== undefined) layers.push(layerAt('--permission-mode', ['permissionMode'], flags.permissionMode));
  if (flags.disallowedTools?.length) layers.push(layerAt('--disallowedTools', ['permissions', 'deny'], flags.disallowedTools));
  for (const config of flags.mcpConfig ?? []) layers.push({ label: config.label, values: { mcpServers: config.servers } });
  for (const kind of ['usd', 'minutes', 'turns'] as const) {
    const value = flags.budget?.[kind];
    if (value !== undefined) layers.push(layerAt(`--budget-${kind}`, ['budget', 'team', kind], value));
  }
  for (const choice of flags.runChoices ?? []) {
    if (choice.approver !== undefined) layers.push(layerAt(choice.label, ['plans', 'approver'], choice.approver));
    if (choice.autoApproveMinutes !== undefined) layers.push(layerAt(choice.label, ['plans', 'autoApproveMinutes'], choice.autoApproveMinutes));
    if (choice.reviewMaxRounds !== undefined) layers.push(layerAt(choice.label, ['reviewMaxRounds'], choice.reviewMaxRounds));
  }
  return layers;
}
