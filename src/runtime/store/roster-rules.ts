// What every backend's roster checks the same way (docs/contract.md#roster): agent names, statuses, the
// fields of a new member, and the patch a status change writes. A backend adds only where and how
// the roster is kept.
import { AGENT_NAME_PATTERN, describeNameRule, HUDDLE_SENDER, MEMBER_STATUSES, type MemberStatus, PERSON_SENDER } from '../vocabulary.js';
import { type MemberPatch, type NewMember, RosterError, type StatusExtra } from './roster.js';

export function assertMemberName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !AGENT_NAME_PATTERN.test(name)) throw new RosterError(describeNameRule(name));
  // The person's and huddle's own sender names: an agent named so would speak as them (docs/trust.md).
  if (name === PERSON_SENDER || name === HUDDLE_SENDER)
    throw new RosterError(`'${name}' is reserved (it names ${name === PERSON_SENDER ? 'the person' : 'huddle itself'} as a sender); pick another name`);
}

export function assertStatus(status: unknown): asserts status is MemberStatus {
  if (!MEMBER_STATUSES.includes(status as MemberStatus)) {
    throw new RosterError(`invalid status '${String(status)}'; use one of ${MEMBER_STATUSES.join(', ')}`);
  }
}

/** A new member's name, role and status, checked, and its other fields without the undefined ones. */
export function newMemberParts(input: NewMember): { name: string; role: string; status: MemberStatus; extra: Record<string, unknown> } {
  const { name, role, status = 'working', ...rest } = input;
  assertMemberName(name);
  if (typeof role !== 'string' || role.trim() === '') throw new RosterError(`teammate '${name}' needs a role`);
  assertStatus(status);
  return { name, role, status, extra: Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined)) };
}

/** What setStatus writes: `reason`/`error` as `status_reason`/`error` (cleared when absent), and the task when given. */
export function statusPatch(status: MemberStatus, extra: StatusExtra): MemberPatch {
  assertStatus(status);
  const patch: MemberPatch = { status, status_reason: extra.reason, error: extra.error };
  if (extra.task !== undefined) patch.task = extra.task;
  return patch;
}
