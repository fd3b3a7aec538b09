// huddle's own tools' input schemas are converted to JSON Schema when huddle is built
// (src/agents/tools/built-input-schemas.ts, scripts/bundle-options.mjs), and the registry offers the
// model those instead of converting them at every start: the same schemas, a tool of another origin
// that shares a name still gets its own, and a build that left the conversion out is caught.
import { build } from 'esbuild';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { builtInputSchemas, huddleTools } from '../../../src/agents/tools/built-input-schemas.js';
import { builtInputSchema, inputJsonSchemaOf, ToolRegistry } from '../../../src/runtime/tools/registry.js';
import { defineTool, type Tool } from '../../../src/runtime/tools/types.js';
import { bundleOptions } from '../../../scripts/bundle-options.mjs';

describe('the input schemas of the build', () => {
  it('give every tool of huddle the schema zod converts its input to, plan_approval both ways', () => {
    const built = builtInputSchemas();
    const tools = huddleTools();
    expect(tools.length).toBeGreaterThan(25);
    for (const tool of tools) expect(builtInputSchema(tool, built), tool.name).toEqual(inputJsonSchemaOf(tool));
    expect(built.plan_approval).toHaveLength(2);
    // The registry offers the same definitions (here, from source, it converts: the build's table is empty).
    for (const tool of tools) {
      const [live] = new ToolRegistry([tool]).definitions();
      expect({ name: tool.name, description: tool.description, input_schema: builtInputSchema(tool, built) }).toEqual(live);
    }
  });

  it("are not given to a tool that asks for other fields than huddle's tool of that name", () => {
    const built = builtInputSchemas();
    const run = async () => 'ok';
    const otherBash = defineTool({ name: 'bash', effects: ['shell'], description: 'another bash', input: z.object({ script: z.string() }), run });
    const reordered = defineTool({
      name: 'bash',
      effects: ['shell'],
      description: 'fields in another order',
      input: z.object({ timeout_ms: z.number().optional(), command: z.string() }),
      run,
    });
    const notAnObject = { name: 'bash', description: 'x', input: z.record(z.string(), z.unknown()), run } as Tool;
    expect(builtInputSchema(otherBash, built)).toBeUndefined();
    expect(builtInputSchema(reordered, built)).toBeUndefined();
    expect(builtInputSchema(notAnObject, built)).toBeUndefined();
    expect(new ToolRegistry([otherBash]).definitions()[0]!.input_schema.properties).toEqual({ script: { type: 'string' } });
  });

  it('are in the bundle: the build replaced every read of __HUDDLE_TOOL_INPUT_SCHEMAS__ with them', async () => {
    const result = await build({
      ...bundleOptions({ outdir: path.join(process.cwd(), '.schemas-check'), version: '0.0.0-test' }),
      write: false,
      sourcemap: false,
      logLevel: 'silent',
    });
    const code = result.outputFiles.filter((file) => file.path.endsWith('.js')).map((file) => file.text);
    expect(code.filter((text) => text.includes('__HUDDLE_TOOL_INPUT_SCHEMAS__'))).toEqual([]);
    const withTable = code.filter((text) => text.includes('"spawn_teammate":[{"type":"object","properties":{"name":{"type":"string"'));
    // In the registry's chunk, inlined where it is read: no module of its own (see face-loads.test.ts for cli.js).
    expect(withTable).toHaveLength(1);
    expect(withTable[0]).toContain('inputJsonSchema');
  }, 120_000);
});
