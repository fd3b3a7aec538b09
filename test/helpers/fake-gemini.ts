// A fake Gemini API (generativelanguage `:streamGenerateContent?alt=sse`) for driving the real
// Gemini CLI offline through GOOGLE_GEMINI_BASE_URL. Scripted responses are model turns made of
// parts (text or functionCall); every request is recorded. Other calls (the CLI's model router)
// get a 404, after which the CLI goes on with its default model.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type GeminiPart = { text: string } | { functionCall: { name: string; args: Record<string, unknown> } };

export interface FakeGemini {
  url: string;
  requests: Array<{ url: string; body: any }>;
  /** Queues model turns for streamGenerateContent requests, in order. */
  script(...turns: GeminiPart[][]): void;
  close(): Promise<void>;
}

export function geminiText(text: string): GeminiPart {
  return { text };
}

export function geminiCall(name: string, args: Record<string, unknown> = {}): GeminiPart {
  return { functionCall: { name, args } };
}

export async function startFakeGemini(): Promise<FakeGemini> {
  const queue: GeminiPart[][] = [];
  const requests: FakeGemini['requests'] = [];
  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      body = raw;
    }
    requests.push({ url: req.url ?? '', body });
    if (!req.url?.includes(':streamGenerateContent')) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 404, message: `fake-gemini: no route for ${req.url}`, status: 'NOT_FOUND' } }));
      return;
    }
    const parts = queue.shift() ?? [geminiText('[fake-gemini: no scripted response]')];
    const chunk = {
      candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 },
    };
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(`data: ${JSON.stringify(chunk)}\n\n`);
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
    url: `http://127.0.0.1:${port}`,
    requests,
    script: (...turns) => void queue.push(...turns),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
