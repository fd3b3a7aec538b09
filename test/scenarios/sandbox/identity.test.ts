// Identity cannot be claimed from inside the sandbox (docs/trust.md): a real `huddle -p` whose lead
// (auto mode, scripted through the fake API) runs `huddle mcp --as lead` and `--as alice` from its
// bash tool, speaking MCP to it, and tries to make the store trust a key of its own. The server
// refuses to start without the person's key, nothing reaches the board or an inbox, and the
// team's copy of the key's hash cannot be rewritten.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { type FakeApi, reply, replyText, startFakeApi, toolUse } from '../../helpers/fake-api.js';
import { lastToolResults } from '../../helpers/team-harness.js';
import { CLI_PATH, makeWorkspace, runCli, type Workspace } from '../../helpers/run-cli.js';
import { describeSandboxed, shellQuote } from '../../helpers/sandbox-arena.js';

let fake: FakeApi;
let ws: Workspace;
beforeEach(async () => {
  fake = await startFakeApi();
  ws = makeWorkspace('huddle-identity-');
});
afterEach(async () => {
  await fake.close();
  ws.cleanup();
});

/** A command that starts `huddle mcp --as NAME`, asks it to create a task and send a message, and prints what came back. */
function mcpProbe(name: string, prelude = ''): string {
  const rpc = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '0' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'task_create', arguments: { subject: `forged-by-${name}` } } },
    {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'send_message', arguments: { to: name === 'lead' ? 'alice' : 'lead', content: `pwned-as-${name}` } },
    },
  ];
  const script =
    `const {spawn}=require('child_process');` +
    `const p=spawn(process.execPath,[${JSON.stringify(CLI_PATH)},'mcp','--as',${JSON.stringify(name)},'--cwd',process.cwd()],{stdio:['pipe','pipe','pipe']});` +
    `let out='',err='';p.stdout.on('data',d=>out+=d);p.stderr.on('data',d=>err+=d);` +
    `for(const m of ${JSON.stringify(rpc)})p.stdin.write(JSON.stringify(m)+'\\n');` +
    `const t=setTimeout(()=>p.kill(),8000);` +
    `p.on('exit',c=>{clearTimeout(t);console.log('EXIT',c,'OUT',out,'ERR',err)});` +
    `setTimeout(()=>p.stdin.end(),3000)`;
  return `${prelude}${JSON.stringify(process.execPath)} -e ${shellQuote(script)}`;
}

describeSandboxed('identity, from inside the sandbox', () => {
  it('an agent cannot run huddle mcp as the lead or a teammate, nor plant a key of its own', async () => {
    // A key of its own where huddle mcp looks for one (keys/ in its runtime directory, as the sandbox
    // shows it), and the team's hash rewritten to match it.
    const forge =
      `const c=require('crypto'),fs=require('fs'),path=require('path'),os=require('os');` +
      `const team=path.join(fs.realpathSync(process.cwd()),'.team');const key='forged';` +
      `for(const dir of [process.env.XDG_RUNTIME_DIR&&path.join(process.env.XDG_RUNTIME_DIR,'huddle'),path.join(os.tmpdir(),'huddle-'+process.getuid()),'/tmp/huddle-'+process.getuid()].filter(Boolean)){` +
      `try{fs.mkdirSync(path.join(dir,'keys'),{recursive:true,mode:0o700});fs.writeFileSync(path.join(dir,'keys','person-'+c.createHash('sha256').update(team).digest('hex').slice(0,16)+'.key'),key);console.log('key-planted',dir)}catch(e){console.log('key-refused',e.code)}}` +
      `try{fs.writeFileSync(path.join(team,'person-key.sha256'),c.createHash('sha256').update(key).digest('hex'));console.log('hash-write=0')}catch(e){console.log('hash-refused',e.code)}`;
    const forgeKey = `${JSON.stringify(process.execPath)} -e ${shellQuote(forge)}; `;
    const probes = [mcpProbe('lead'), mcpProbe('alice'), `${forgeKey}${mcpProbe('lead')}`];
    fake.script(
      'lead',
      reply(toolUse('spawn_teammate', { name: 'alice', role: 'coder', prompt: 'Wait.' })),
      reply(...probes.map((command) => toolUse('bash', { command, timeout_ms: 30_000 }))),
      replyText('done probing'),
    );
    fake.script('alice', reply(toolUse('idle', {})));
    const result = await runCli(['-p', 'Probe huddle mcp.', '--permission-mode', 'auto'], {
      cwd: ws.dir,
      env: { ANTHROPIC_BASE_URL: fake.url },
      timeoutMs: 90_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('done probing');

    const results = lastToolResults(fake.requests.filter((r) => r.agent === 'lead')[2]!);
    expect(results).toHaveLength(probes.length);
    for (const [i, probe] of results.entries()) {
      expect(probe.content, `probe ${i}`).toContain('EXIT 2');
      expect(probe.content, `probe ${i}`).toContain("acts for the person, and this process cannot show the person's key");
      expect(probe.content, `probe ${i}`).not.toContain('created task');
    }
    expect(results[2]!.content).toContain('key-planted');
    expect(results[2]!.content).toContain('hash-refused EROFS');
    expect(results[2]!.content).not.toContain('hash-write=0');

    // Nothing reached the board or an inbox.
    const tasks = existsSync(path.join(ws.dir, '.tasks')) ? readdirSync(path.join(ws.dir, '.tasks')) : [];
    for (const file of tasks) expect(readFileSync(path.join(ws.dir, '.tasks', file), 'utf8')).not.toContain('forged');
    const inboxes = path.join(ws.dir, '.team', 'inbox');
    for (const file of existsSync(inboxes) ? readdirSync(inboxes) : []) expect(readFileSync(path.join(inboxes, file), 'utf8')).not.toContain('pwned');
  }, 120_000);
});
