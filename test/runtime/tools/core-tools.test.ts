import { describe, expect, it } from 'vitest';
import { coreTools } from '../../../src/runtime/tools/core-tools.js';
import { ToolRegistry } from '../../../src/runtime/tools/registry.js';

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
});
