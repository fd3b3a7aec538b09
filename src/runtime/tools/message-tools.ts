// Messaging tools on top of the bus: send_message and read_inbox (every agent), broadcast (the lead;
// whoever assembles an agent's tools decides who gets it). read_inbox gives its messages as the same
// `<inbox>` turn as a delivery between turns (runtime/inbox.ts).
import * as z from 'zod';
import type { Bus } from '../store/bus.js';
import type { Message } from '../store/bus.js';
import { formatInbox } from '../inbox.js';
import { defineTool, ToolError } from './types.js';

export const NO_NEW_MESSAGES = 'no new messages';

export interface MessageToolsOptions {
  /**
   * When given, read_inbox does not ack: it peeks, and this is called with the offset to ack once the
   * tool result has been persisted (exactly once across a crash). Without it read_inbox takes
   * (peek + ack at once), so a crash before the result is recorded loses those messages.
   */
  deferAck?: (agent: string, nextOffset: number, messages: Message[]) => void;
  /**
   * Fields huddle adds to a message an agent sends (a teammate's report to the lead carries the
   * results of the tasks it completed since its last one); never taken from the agent's input.
   * `sent` is called once the message is stored: a send that failed leaves them for the next one.
   */
  annotate?: (from: string, to: string) => { fields: Record<string, unknown>; sent: () => void } | undefined;
}

const sendMessageInput = z.object({
  to: z.string().describe('the teammate to send to (a name from the roster, e.g. "lead")'),
  content: z.string().min(1, 'say something').describe('the message text'),
});
const readInboxInput = z.object({});
/** Also the team's broadcast (agents/tools/team-tools.ts): one schema for one name (the build converts it once). */
export const broadcastInput = z.object({
  content: z.string().min(1, 'say something').describe('the message text, sent to every teammate'),
});

export function messageTools(bus: Bus, options: MessageToolsOptions = {}) {
  const sendMessage = defineTool({
    name: 'send_message',
    effects: ['message'],
    description: 'Send a message to one teammate (or to "lead"). It lands in their inbox and reaches them at their next turn.',
    input: sendMessageInput,
    summarize: (input) => `→ ${input.to}: ${input.content}`,
    async run(input, context) {
      if (input.to === context.agent) throw new ToolError(`you are '${context.agent}'; send_message goes to someone else`);
      const extra = options.annotate?.(context.agent, input.to);
      const message = await bus.send({ ...extra?.fields, type: 'message', from: context.agent, to: input.to, content: input.content });
      extra?.sent();
      return `sent to ${input.to} (${message.id})`;
    },
  });

  const readInbox = defineTool({
    name: 'read_inbox',
    effects: ['read'],
    description: 'Read the unread messages in your inbox. Messages also arrive on their own between turns; use this to check now.',
    input: readInboxInput,
    summarize: () => 'inbox',
    async run(_input, context) {
      let messages: Message[];
      if (options.deferAck) {
        const peeked = await bus.peek(context.agent);
        messages = peeked.messages;
        options.deferAck(context.agent, peeked.nextOffset, messages);
      } else {
        messages = await bus.take(context.agent);
      }
      if (messages.length === 0) return NO_NEW_MESSAGES;
      context.events.emit('message_delivered', { ids: messages.map((message) => message.id), via: 'read_inbox' });
      return formatInbox(messages);
    },
  });

  const broadcast = defineTool({
    name: 'broadcast',
    effects: ['message'],
    description: 'Send the same message to every teammate at once. Use sparingly: everyone reads it.',
    input: broadcastInput,
    summarize: (input) => input.content,
    async run(input, context) {
      const sent = await bus.broadcast(context.agent, input.content);
      if (sent.length === 0) return 'no teammates to broadcast to';
      return `broadcast to ${sent.length} teammate${sent.length === 1 ? '' : 's'}: ${sent.map((message) => message.to).join(', ')}`;
    },
  });

  return { sendMessage, readInbox, broadcast };
}
