import { describe, expect, it } from 'vitest';
import { coreTools } from '../../../src/runtime/tools/core-tools.js';
import { inputJsonSchemaOf, ToolRegistry } from '../../../src/runtime/tools/registry.js';
import { taskTools } from '../../../src/runtime/tools/task-tools.js';

describe('coreTools', () => {
  it('gives the six file and shell tools in the order of the spec', () => {
    expect(coreTools().map((tool) => tool.name)).toEqual(['bash', 'read_file', 'write_file', 'edit_file', 'glob', 'grep']);
  });

  it('describes every input field for the model', () => {
    for (const definition of new ToolRegistry(coreTools()).definitions()) {
      expect(definition.description.length, definition.name).toBeGreaterThan(40);
      const properties = definition.input_schema.properties as Record<string, { description?: string }>;
      expect(Object.keys(properties).length, definition.name).toBeGreaterThan(0);
      for (const [field, schema] of Object.entries(properties)) {
        expect(schema.description, `${definition.name}.${field}`).toMatch(/\w{3,}/);
      }
    }
  });

  it('offers no bound that tells the model nothing, and still checks the input against it', async () => {
    const tools = [...coreTools(), ...taskTools({} as never)];
    const offered = JSON.stringify(tools.map((tool) => inputJsonSchemaOf(tool)));
    expect(offered).not.toMatch(/"minLength":1[,}]|"exclusiveMinimum":0[,}]|9007199254740991/);
    // Bounds that say something stay: a 1-based offset, the longest timeout.
    expect(offered).toContain('"minimum":1');
    expect(offered).toContain('"maximum":600000');
    const registry = new ToolRegistry(coreTools());
    const refused = await registry.run('bash', { command: '' }, {} as never);
    expect(refused).toMatchObject({ isError: true, content: expect.stringMatching(/^invalid input for bash: command: /) });
  });
});
