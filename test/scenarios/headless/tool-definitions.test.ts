// The built CLI offers the model huddle's tools with the input schemas the build converted
// (src/agents/tools/built-input-schemas.ts): each is what zod makes of the tool's live input schema
// in this source, field for field, for a headless lead's whole tool list.
import { afterEach, beforeEach, expect, it } from 'vitest';
import { huddleTools } from '../../../src/agents/tools/built-input-schemas.js';
import { fieldsOf, inputJsonSchemaOf } from '../../../src/runtime/tools/registry.js';
import type { JsonObjectSchema } from '../../../src/runtime/tools/types.js';
import { type FakeApi, replyText, startFakeApi } from '../../helpers/fake-api.js';
import { makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';

let fake: FakeApi;
let ws: Workspace;
beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-tool-definitions-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
});

it("offers each of the lead's tools with the schema zod converts its input to", async () => {
  fake.enqueue(replyText('hi'));
  const result = await runCli(['-p', 'hi'], { cwd: ws.dir, env: { ANTHROPIC_BASE_URL: fake.url } });
  expect(result.code, result.stderr).toBe(0);
  const offered = fake.requests[0]!.body.tools as Array<{ name: string; input_schema: JsonObjectSchema }>;
  expect(offered.map((tool) => tool.name)).toEqual(expect.arrayContaining(['bash', 'write_file', 'task_create', 'spawn_teammate', 'plan_approval', 'explore']));
  const tools = huddleTools();
  for (const { name, input_schema } of offered) {
    const tool = tools.find((candidate) => candidate.name === name && fieldsOf(inputJsonSchemaOf(candidate)).join() === fieldsOf(input_schema).join());
    expect(tool, name).toBeDefined();
    expect(input_schema, name).toEqual(inputJsonSchemaOf(tool!));
  }
});
