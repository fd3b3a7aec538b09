// A fake OpenAI Responses API (`POST /v1/responses`, streamed) for driving the real Codex CLI
// offline through a custom model provider. Scripted responses are lists of output items
// (function calls, assistant messages); every request is recorded.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ResponseItem = { type: 'message'; text: string } | { type: 'function_call'; name: string; namespace?: string; arguments: Record<string, unknown> };

export interface FakeOpenAi {
  /** The base URL to configure (ends in /v1). */
  url: string;
  requests: Array<{ url: string; body: any }>;
  script(...responses: ResponseItem[][]): void;
  close(): Promise<void>;
}

export function say(text: string): ResponseItem {
  return { type: 'message', text };
}

/** A call of tool `name`; an MCP tool of server S is `namespace: 'mcp__S'` (as Codex offers them). */
export function call(name: string, args: Record<string, unknown> = {}, namespace?: string): ResponseItem {
  return { type: 'function_call', name, arguments: args, ...(namespace ? { namespace } : {}) };
}

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const queue: ResponseItem[][] = [];
  const requests: FakeOpenAi['requests'] = [];
  let counter = 0;
  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      body = raw;
    }
    requests.push({ url: req.url ?? '', body });
    if (req.method !== 'POST' || !req.url?.endsWith('/responses')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake-openai: no route for ${req.method} ${req.url}` } }));
      return;
    }
    const id = `resp_${++counter}`;
    const items = (queue.shift() ?? [say('[fake-openai: no scripted response]')]).map((item, index) =>
      item.type === 'message'
        ? { type: 'message', role: 'assistant', id: `msg_${counter}_${index}`, content: [{ type: 'output_text', text: item.text, annotations: [] }] }
        : {
            type: 'function_call',
            id: `fc_${counter}_${index}`,
            call_id: `call_${counter}_${index}`,
            name: item.name,
            ...(item.namespace ? { namespace: item.namespace } : {}),
            arguments: JSON.stringify(item.arguments),
          },
    );
    const events = [
      { type: 'response.created', response: { id } },
      ...items.map((item, index) => ({ type: 'response.output_item.done', output_index: index, item })),
      {
        type: 'response.completed',
        response: {
          id,
          usage: {
            input_tokens: 200,
            input_tokens_details: { cached_tokens: 50 },
            output_tokens: 20,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: 220,
          },
        },
      },
    ];
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of events) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    res.end();
  };
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => handle(req, res, raw));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...responses) => void queue.push(...responses),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
