import { describe, expect, it } from 'vitest';
import { expandText, ExpansionError } from '../../../src/runtime/mcp/expand.js';
import { mcpToolName, toolAllowed, toolPatternMatches } from '../../../src/runtime/mcp/tool-names.js';
import { mapMcpResult } from '../../../src/runtime/mcp/tool-result.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';
import { z } from 'zod';

describe('MCP results as tool results', () => {
  it('keeps text, says what it cannot show, and adds structured content only when no text carries it', () => {
    const png = Buffer.from('not really a png').toString('base64');
    const result = mapMcpResult({
      content: [
        { type: 'text', text: 'first' },
        { type: 'audio', data: Buffer.alloc(3000).toString('base64'), mimeType: 'audio/wav' },
        { type: 'image', data: png, mimeType: 'image/svg+xml' },
        { type: 'resource', resource: { uri: 'file:///a.bin', mimeType: 'application/octet-stream', blob: Buffer.alloc(10).toString('base64') } },
        { type: 'resource', resource: { uri: 'file:///b.png', mimeType: 'image/png', blob: png } },
      ],
      structuredContent: { rows: 2 },
      isError: true,
    });
    expect(result.isError).toBe(true);
    expect(result.content.split('\n')).toEqual([
      'first',
      '[audio audio/wav, 2.9 kB: not shown]',
      '[image image/svg+xml, 16 bytes: a type the model cannot see]',
      '[resource file:///a.bin (application/octet-stream), 10 bytes of binary data: not shown]',
      '[image image/png, 16 bytes]',
      'structured content:',
      '{',
      '  "rows": 2',
      '}',
    ]);
    expect(result.blocks?.filter((block) => block.type === 'image')).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
    ]);
    expect(mapMcpResult({ content: [{ type: 'text', text: '{"rows": 2}' }], structuredContent: { rows: 2 } })).toEqual({ content: '{"rows": 2}' });
    expect(mapMcpResult({ content: [] })).toEqual({ content: '(no output)' });
  });
});

describe('MCP tool names and access', () => {
  it("names tools mcp__server__tool within the API's alphabet and length", () => {
    expect(mcpToolName('everything', 'get-sum')).toBe('mcp__everything__get-sum');
    expect(mcpToolName('my.server', 'do it')).toBe('mcp__my_server__do_it');
    expect(mcpToolName('s', 'x'.repeat(100))).toHaveLength(64);
  });

  it('matches exact names, globs and whole servers; deny wins', () => {
    expect(toolPatternMatches('mcp__fs__read_file', 'mcp__fs__read_file')).toBe(true);
    expect(toolPatternMatches('mcp__fs__*', 'mcp__fs__write_file')).toBe(true);
    expect(toolPatternMatches('mcp__fs', 'mcp__fs__write_file')).toBe(true);
    expect(toolPatternMatches('mcp__fs', 'mcp__fsx__write_file')).toBe(false);
    expect(toolPatternMatches('mcp__fs__read*', 'mcp__fs__write_file')).toBe(false);
    expect(toolAllowed('mcp__fs__write_file', { tools: ['mcp__fs'], denyTools: ['mcp__fs__write*'] })).toBe(false);
    expect(toolAllowed('mcp__fs__read_file', { tools: ['mcp__fs'], denyTools: ['mcp__fs__write*'] })).toBe(true);
    expect(toolAllowed('anything', {})).toBe(true);
  });

  it('expands ${VAR} and ${VAR:-default}', () => {
    expect(expandText('Bearer ${TOKEN}', { TOKEN: 't' })).toBe('Bearer t');
    expect(expandText('${HOST:-localhost}:${PORT:-8080}', { PORT: '9' })).toBe('localhost:9');
    expect(() => expandText('${MISSING}', {})).toThrow(ExpansionError);
  });

  it('a tool with its own JSON schema is offered to the API untouched', () => {
    const schema = { type: 'object' as const, properties: { q: { type: 'string', pattern: '^[a-z]+$' } }, required: ['q'], additionalProperties: false };
    const registry = new ToolRegistry([
      { name: 'mcp__s__t', description: 'd', input: z.record(z.string(), z.unknown()), inputJsonSchema: schema, run: async () => 'ok' },
    ]);
    expect(registry.definitions()).toEqual([{ name: 'mcp__s__t', description: 'd', input_schema: schema }]);
  });
});
