// An MCP tool's result as huddle's tool result: text stays text; images the API accepts go to the
// model as images; resource links and embedded resources become text that says what they are;
// structured content is added as JSON unless a text block already carries it; isError is kept.
import { capOutput } from '../process/output-cap.js';
import type { ToolResult, ToolResultBlock } from '../tools/types.js';

/** What an MCP CallToolResult may hold (kept loose: servers send what they send). */
export interface McpCallResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
  /** Results of servers on protocol versions before content blocks. */
  toolResult?: unknown;
}

const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
const MAX_TEXT = 30_000;

export function mapMcpResult(result: McpCallResult): ToolResult {
  const blocks: ToolResultBlock[] = [];
  const text: string[] = [];
  const addText = (value: string) => {
    blocks.push({ type: 'text', text: value });
    text.push(value);
  };
  for (const raw of result.content ?? []) {
    const item = (raw ?? {}) as Record<string, unknown>;
    switch (item.type) {
      case 'text':
        addText(String(item.text ?? ''));
        break;
      case 'image':
        addImage(item, blocks, text, addText);
        break;
      case 'audio':
        addText(`[audio ${String(item.mimeType ?? '')}, ${describeSize(item.data)}: not shown]`);
        break;
      case 'resource_link':
        addText(
          `[resource link] ${String(item.name ?? item.uri)}: ${String(item.uri)}${item.mimeType ? ` (${String(item.mimeType)})` : ''}${item.description ? ` — ${String(item.description)}` : ''}`,
        );
        break;
      case 'resource':
        addResource((item.resource ?? {}) as Record<string, unknown>, blocks, text, addText);
        break;
      default:
        addText(JSON.stringify(item));
    }
  }
  if (result.toolResult !== undefined && !result.content?.length) addText(JSON.stringify(result.toolResult, null, 2));
  if (result.structuredContent !== undefined && !text.some((t) => sameJson(t, result.structuredContent))) {
    addText(`structured content:\n${JSON.stringify(result.structuredContent, null, 2)}`);
  }
  if (!blocks.length) addText('(no output)');

  const content = capOutput(text.join('\n'), MAX_TEXT);
  const hasImage = blocks.some((block) => block.type === 'image');
  const out: ToolResult = { content };
  if (result.isError) out.isError = true;
  // Plain text results need no blocks: `content` says it all (and is capped).
  if (hasImage) out.blocks = blocks.map((block) => (block.type === 'text' ? { type: 'text', text: capOutput(block.text, MAX_TEXT) } : block));
  return out;
}

function addImage(item: Record<string, unknown>, blocks: ToolResultBlock[], text: string[], addText: (value: string) => void): void {
  const mime = String(item.mimeType ?? '');
  const data = typeof item.data === 'string' ? item.data : '';
  if (IMAGE_TYPES.has(mime) && data) {
    blocks.push({ type: 'image', source: { type: 'base64', media_type: mime as 'image/png', data } });
    text.push(`[image ${mime}, ${describeSize(data)}]`);
  } else addText(`[image ${mime || 'of unknown type'}, ${describeSize(data)}: a type the model cannot see]`);
}

function addResource(resource: Record<string, unknown>, blocks: ToolResultBlock[], text: string[], addText: (value: string) => void): void {
  const uri = String(resource.uri ?? '');
  const mime = typeof resource.mimeType === 'string' ? resource.mimeType : undefined;
  if (typeof resource.text === 'string') {
    addText(`[resource ${uri}${mime ? ` (${mime})` : ''}]\n${resource.text}`);
    return;
  }
  if (typeof resource.blob === 'string' && mime && IMAGE_TYPES.has(mime)) {
    addImage({ mimeType: mime, data: resource.blob }, blocks, text, addText);
    return;
  }
  addText(`[resource ${uri}${mime ? ` (${mime})` : ''}, ${describeSize(resource.blob)} of binary data: not shown]`);
}

/** The decoded size of base64 data, in words. */
function describeSize(data: unknown): string {
  if (typeof data !== 'string') return 'no data';
  const bytes = Math.floor((data.length * 3) / 4) - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0);
  return bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} kB`;
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}
