// Context management on a long session: a scripted transcript of ~150k tokens (120 read_file
// calls with ~5k-character results), compacted through the real ModelClient against the fake
// Messages API (which answers with a ~3k-character summary at once, so the time is huddle's own:
// rendering the transcript, the HTTP round trip of a ~600 KB request, writing the transcript file,
// rebuilding the context), and the cheaper first step, cutting old tool results to stubs.
import path from 'node:path';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages';
import { AgentLoop } from '../src/agents/loop/agent-loop.js';
import { Compactor } from '../src/agents/loop/compaction.js';
import { trimOldToolResults } from '../src/agents/loop/context-trim.js';
import { estimateTokens } from '../src/runtime/model/context-window.js';
import { agentEmitter, EventHub } from '../src/runtime/events/events.js';
import { ModelClient } from '../src/runtime/model/model-client.js';
import { coreTools } from '../src/runtime/tools/core-tools.js';
import { ToolRegistry } from '../src/runtime/tools/registry.js';
import { Workspace } from '../src/runtime/workspace/workspace.js';
import { EventLog } from '../src/runtime/store/file/event-log.js';
import { replyText, startFakeApi } from '../test/helpers/fake-api.js';
import { type BenchResult, TEST_API_KEY, log, median, result, spread, tempDir } from './lib.js';
import { systemText } from '../src/runtime/model/system-prompt.js';

const CALLS = 120;
const RESULT_CHARS = 4_550;

/** A session of CALLS read_file calls, each answered by a ~RESULT_CHARS numbered listing. */
function scriptedTranscript(): MessageParam[] {
  const messages: MessageParam[] = [{ role: 'user', content: 'Audit every module under src/ and report what each one does.' }];
  for (let call = 1; call <= CALLS; call++) {
    const id = `toolu_bench_${call}`;
    const lines: string[] = [];
    for (let line = 1; lines.join('\n').length < RESULT_CHARS; line++) {
      lines.push(`${String(line).padStart(6)}\texport function step${call}_${line}(input: string): string { return input.trim() + '${call}'; }`);
    }
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Reading module ${call} next.` },
        { type: 'tool_use', id, name: 'read_file', input: { path: `src/module-${call}.ts` } },
      ],
    });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: lines.join('\n') }] });
  }
  return messages;
}

export async function benchCompaction(runs = 5): Promise<BenchResult[]> {
  const fake = await startFakeApi();
  const summary = `SUMMARY\n${'- module n: exports step functions that trim their input and append n.\n'.repeat(45)}`;
  fake.respond(() => replyText(summary));
  const transcript = scriptedTranscript();
  const times: number[] = [];
  const saved: number[] = [];
  const trimTimes: number[] = [];
  let before = 0;
  let after = 0;
  let trimmedTokens = 0;
  try {
    for (let run = 0; run <= runs; run++) {
      const temp = tempDir('huddle-bench-compaction-');
      try {
        const hub = new EventHub();
        const workspace = new Workspace(temp.dir);
        const loop = new AgentLoop({
          name: 'alice',
          model: 'claude-sonnet-4-6',
          system: "You are 'alice', role: coder, team: bench.",
          tools: new ToolRegistry(coreTools()),
          backend: new ModelClient({ apiKey: TEST_API_KEY, baseURL: fake.url, maxRetries: 0, retryBaseMs: 10, timeoutMs: 30_000 }),
          events: agentEmitter(hub, 'alice'),
          workspace,
          maxTokens: 8192,
          maxTurns: 10,
        });
        loop.messages.push(...structuredClone(transcript));
        const tokens = estimateTokens(systemText(loop.system).length + JSON.stringify(loop.tools.definitions()).length + JSON.stringify(loop.messages).length);
        loop.totals.contextTokens = tokens;
        const compactor = new Compactor({
          loop,
          identity: { name: 'alice', role: 'coder', team: 'bench' },
          ownedTasks: async () => [{ id: 1, subject: 'Audit the modules' }],
          backend: new ModelClient({ apiKey: TEST_API_KEY, baseURL: fake.url, maxRetries: 0, retryBaseMs: 10, timeoutMs: 30_000 }),
          events: agentEmitter(hub, 'alice'),
          transcripts: new EventLog(hub, path.join(workspace.teamDir, 'logs'), { root: workspace.root, secrets: [TEST_API_KEY] }),
          config: { maxTokens: 8192, apiKey: TEST_API_KEY, authToken: undefined },
        });

        // The first step alone, on its own copy: old results to stubs (keeping the last 3 turns).
        const copy = structuredClone(transcript);
        const trimStarted = performance.now();
        const trimmed = trimOldToolResults(copy, 3);
        const trimMs = performance.now() - trimStarted;

        const started = performance.now();
        const outcome = await compactor.compact().done;
        const ms = performance.now() - started;
        if (run === 0) continue; // warm-up: JIT, the SDK's first request, the fake server's first socket
        times.push(ms);
        trimTimes.push(trimMs);
        before = outcome.beforeTokens;
        after = outcome.afterTokens;
        saved.push(outcome.beforeTokens - outcome.afterTokens);
        trimmedTokens = estimateTokens(trimmed.charsBefore - trimmed.charsAfter);
      } finally {
        temp.cleanup();
      }
    }
  } finally {
    await fake.close();
  }
  log(`compaction: ${times.map((t) => t.toFixed(0)).join(' ')} ms; ${before} → ${after} tokens`);
  return [
    result({
      name: 'compaction: summarise a 150k-token transcript',
      value: median(times),
      unit: 'ms',
      samples: runs,
      stat: 'median wall time of Compactor.compact(), the summary served at once by the local fake API',
      note: `${CALLS} read_file calls with ~${RESULT_CHARS.toLocaleString('en-US')}-char results; includes the ~${Math.round(JSON.stringify(transcript).length / 1000)} KB transcript rendered, sent and written to transcript-*.json; excludes the model's own time`,
      detail: spread(times),
    }),
    result({
      name: 'compaction: tokens saved',
      value: median(saved),
      unit: 'tokens',
      samples: runs,
      stat: 'estimated context before minus after (characters / 4)',
      note: `${before.toLocaleString('en-US')} → ${after.toLocaleString('en-US')} tokens`,
    }),
    result({
      name: 'context trim: cut old tool results',
      value: median(trimTimes),
      unit: 'ms',
      samples: runs,
      stat: 'median time of trimOldToolResults over the same transcript (last 3 turns kept)',
      note: `~${trimmedTokens.toLocaleString('en-US')} tokens saved by stubs alone`,
      detail: spread(trimTimes),
    }),
  ];
}
