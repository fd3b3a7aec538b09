/**
 * A fake GitHub REST API on node:http, held to GitHub's own published OpenAPI description
 * (`@octokit/openapi`, the api.github.com document), as fake-api.ts is for Anthropic's Messages API.
 *
 * It implements only what huddle calls: list a repository's issues, search issues, list / create /
 * get / update pull requests, list a ref's check runs; and the one GraphQL mutation REST lacks
 * (markPullRequestReadyForReview). Every REST request (its query parameters and JSON body) and
 * every response (status and body) is validated against the operation's schemas in the document
 * with Ajv (the document's schemas are JSON Schema with OpenAPI's `nullable`, which Ajv reads;
 * ajv-formats checks `date-time`, `uri` and the like). A mismatch is kept in `violations` and
 * answered 500, so the fake cannot drift from the real API without a test failing. Response
 * bodies are built from the schema itself (every required field, nullable ones null) with the
 * fake's own data laid over them. The GraphQL endpoint is not in the REST document: it checks the
 * mutation's shape by hand.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

const require = createRequire(import.meta.url);
type Schema = Record<string, any>;
// The document is 13 MB: read and compiled once per test process.
let spec: Schema | undefined;
let ajv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction>();

function openApi(): { spec: Schema; ajv: Ajv } {
  if (!spec || !ajv) {
    spec = require('@octokit/openapi/generated/api.github.com.json') as Schema;
    ajv = new Ajv({ strict: false, allErrors: false, validateSchema: false, logger: false });
    (addFormatsModule as unknown as (a: Ajv) => void)(ajv);
    ajv.addSchema(jsonSchemaOf(spec) as Schema, 'gh');
  }
  return { spec, ajv };
}

/**
 * OpenAPI 3.0's `nullable: true` as JSON Schema says it (OpenAPI 3.1's own rule): `null` added to
 * the type (and the enum), or, where the schema has no type (an allOf, a $ref), an anyOf with null.
 */
function jsonSchemaOf(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(jsonSchemaOf);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = jsonSchemaOf(value);
  if (out.nullable !== true) return out;
  delete out.nullable;
  if (typeof out.type === 'string') {
    out.type = [out.type, 'null'];
    if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
    return out;
  }
  return { anyOf: [out, { type: 'null' }] };
}

/** A piece of the document as a schema of its own: its `#/…` references point into the document. */
function rebased(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(rebased);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node))
    out[key] = key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `gh${value}` : rebased(value);
  return out;
}

function resolve(node: Schema): Schema {
  let current = node;
  while (current?.$ref) {
    const pointer = (current.$ref as string).replace(/^gh/, '').replace(/^#\//, '').split('/');
    current = pointer.reduce((at: any, part) => at[part.replace(/~1/g, '/').replace(/~0/g, '~')], openApi().spec);
  }
  return current;
}

function validator(key: string, schema: Schema): ValidateFunction {
  let fn = compiled.get(key);
  if (!fn) {
    fn = openApi().ajv.compile(rebased(schema) as Schema);
    compiled.set(key, fn);
  }
  return fn;
}

/** A value the schema accepts: every required property, nullable ones null, enums their first value. */
export function sampleOf(node: Schema, depth = 0): unknown {
  const schema = resolve(node);
  if (depth > 12) return null;
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((part: Schema) => sampleOf(part, depth + 1)));
  if (schema.anyOf || schema.oneOf) return sampleOf((schema.anyOf ?? schema.oneOf)[0], depth + 1);
  if (schema.enum) return schema.enum[0];
  if (schema.nullable && depth > 0) return null;
  switch (schema.type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const name of schema.required ?? []) out[name] = sampleOf(schema.properties?.[name] ?? {}, depth + 1);
      return out;
    }
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return false;
    case 'string':
      if (schema.format === 'date-time') return '2026-01-01T00:00:00Z';
      if (schema.format === 'uri') return 'https://github.invalid/x';
      if (schema.format === 'email') return 'x@github.invalid';
      return 'x';
    default:
      return null;
  }
}

function deepMerge(base: any, over: any): any {
  if (!over || typeof over !== 'object' || Array.isArray(over) || !base || typeof base !== 'object' || Array.isArray(base)) return over;
  const out = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = key in base ? deepMerge(base[key], value) : value;
  return out;
}

export interface FakeIssue {
  number: number;
  title: string;
  body?: string;
  labels?: string[];
  milestone?: number;
  state?: 'open' | 'closed';
}

export interface FakePull {
  number: number;
  node_id: string;
  title: string;
  body: string;
  head: string;
  base: string;
  draft: boolean;
  state: 'open' | 'closed';
  html_url: string;
}

export interface FakeGitHubRequest {
  method: string;
  path: string;
  operation: string;
  query: Record<string, string>;
  body: unknown;
  authorization: string | undefined;
}

export interface FakeGitHub {
  /** The REST base URL (Octokit's `baseUrl`, huddle's --github-api-url). */
  url: string;
  owner: string;
  repo: string;
  issues: FakeIssue[];
  pulls: FakePull[];
  /** Check runs to report per head branch. */
  checks: Map<string, Array<{ name: string; status: 'queued' | 'in_progress' | 'completed'; conclusion: 'success' | 'failure' | null }>>;
  requests: FakeGitHubRequest[];
  /** Every way a request or a response strayed from GitHub's description (empty when the fake kept to it). */
  violations: string[];
  close(): Promise<void>;
}

interface Route {
  method: string;
  template: string;
  pattern: RegExp;
}

const ROUTES: Route[] = [
  ['get', '/repos/{owner}/{repo}/issues'],
  ['get', '/search/issues'],
  ['get', '/repos/{owner}/{repo}/pulls'],
  ['post', '/repos/{owner}/{repo}/pulls'],
  ['get', '/repos/{owner}/{repo}/pulls/{pull_number}'],
  ['patch', '/repos/{owner}/{repo}/pulls/{pull_number}'],
  ['get', '/repos/{owner}/{repo}/commits/{ref}/check-runs'],
].map(([method, template]) => ({
  method: method!,
  template: template!,
  pattern: new RegExp(`^${template!.replace(/\{ref\}/, '(?<ref>.+)').replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}$`),
}));

export async function startFakeGitHub(options: { token: string; owner?: string; repo?: string; issues?: FakeIssue[] }): Promise<FakeGitHub> {
  openApi();
  const owner = options.owner ?? 'acme';
  const repo = options.repo ?? 'app';
  const sockets = new Set<Socket>();
  const state: FakeGitHub = {
    url: '',
    owner,
    repo,
    issues: options.issues ?? [],
    pulls: [],
    checks: new Map(),
    requests: [],
    violations: [],
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
  const web = (path: string) => `https://github.invalid/${owner}/${repo}${path}`;

  const issueJson = (issue: FakeIssue) => ({
    number: issue.number,
    title: issue.title,
    body: issue.body ?? null,
    state: issue.state ?? 'open',
    html_url: web(`/issues/${issue.number}`),
    labels: (issue.labels ?? []).map((name, i) => ({ id: i + 1, name })),
  });
  const pullJson = (pull: FakePull) => ({
    number: pull.number,
    node_id: pull.node_id,
    title: pull.title,
    body: pull.body,
    state: pull.state,
    draft: pull.draft,
    html_url: pull.html_url,
    head: { ref: pull.head, label: `${owner}:${pull.head}` },
    base: { ref: pull.base, label: `${owner}:${pull.base}` },
  });

  function answer(route: Route, params: Record<string, string>, query: Record<string, string>, body: any): { status: number; body: unknown } {
    if (route.template.startsWith('/repos/') && (params.owner !== owner || params.repo !== repo)) return { status: 404, body: { message: 'Not Found' } };
    const key = `${route.method} ${route.template}`;
    switch (key) {
      case 'get /repos/{owner}/{repo}/issues': {
        const labels = query.labels ? query.labels.split(',') : [];
        const list = state.issues.filter(
          (issue) =>
            (issue.state ?? 'open') === (query.state ?? 'open') &&
            labels.every((label) => issue.labels?.includes(label)) &&
            (query.milestone === undefined || String(issue.milestone) === query.milestone),
        );
        return { status: 200, body: list.map(issueJson) };
      }
      case 'get /search/issues': {
        const words = (query.q ?? '').split(/\s+/).filter((w) => !/^(repo|is):/.test(w));
        const list = state.issues.filter((issue) =>
          words.every((w) => (w.startsWith('label:') ? issue.labels?.includes(w.slice(6)) : issue.title.includes(w))),
        );
        return { status: 200, body: { total_count: list.length, incomplete_results: false, items: list.map(issueJson) } };
      }
      case 'get /repos/{owner}/{repo}/pulls': {
        const head = query.head?.replace(`${owner}:`, '');
        const list = state.pulls.filter((pull) => (query.state ?? 'open') === pull.state && (head === undefined || pull.head === head));
        return { status: 200, body: list.map(pullJson) };
      }
      case 'post /repos/{owner}/{repo}/pulls': {
        if (state.pulls.some((pull) => pull.head === body.head && pull.state === 'open')) {
          return {
            status: 422,
            body: { message: 'Validation Failed', errors: [{ resource: 'PullRequest', code: 'custom', message: 'A pull request already exists' }] },
          };
        }
        const number = state.issues.reduce((max, issue) => Math.max(max, issue.number), 0) + state.pulls.length + 1;
        const pull: FakePull = {
          number,
          node_id: `PR_${number}`,
          title: body.title,
          body: body.body ?? '',
          head: body.head,
          base: body.base,
          draft: body.draft ?? false,
          state: 'open',
          html_url: web(`/pull/${number}`),
        };
        state.pulls.push(pull);
        return { status: 201, body: pullJson(pull) };
      }
      case 'get /repos/{owner}/{repo}/pulls/{pull_number}':
      case 'patch /repos/{owner}/{repo}/pulls/{pull_number}': {
        const pull = state.pulls.find((p) => p.number === Number(params.pull_number));
        if (!pull) return { status: 404, body: { message: 'Not Found' } };
        if (route.method === 'patch') {
          if (typeof body.title === 'string') pull.title = body.title;
          if (typeof body.body === 'string') pull.body = body.body;
          if (typeof body.base === 'string') pull.base = body.base;
          if (body.state === 'open' || body.state === 'closed') pull.state = body.state;
        }
        return { status: 200, body: pullJson(pull) };
      }
      case 'get /repos/{owner}/{repo}/commits/{ref}/check-runs': {
        const runs = (state.checks.get(decodeURIComponent(params.ref!)) ?? []).map((run, i) => ({ id: i + 1, ...run }));
        return { status: 200, body: { total_count: runs.length, check_runs: runs } };
      }
    }
    return { status: 404, body: { message: 'Not Found' } };
  }

  function check(what: string, validate: ValidateFunction, value: unknown): void {
    if (!validate(value)) {
      const first = validate.errors?.[0];
      state.violations.push(`${what}: ${first?.instancePath || '(root)'} ${first?.message ?? 'invalid'} ${first ? JSON.stringify(first.params) : ''}`);
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = (req.method ?? 'GET').toLowerCase();
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(body));
    };
    let body: any;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      return send(400, { message: 'Problems parsing JSON' });
    }
    const authorization = req.headers.authorization;
    const query = Object.fromEntries(url.searchParams);
    if (url.pathname === '/graphql' && method === 'post') {
      state.requests.push({ method, path: url.pathname, operation: 'graphql', query, body, authorization });
      if (authorization !== `token ${options.token}` && authorization !== `bearer ${options.token}`) return send(401, { message: 'Bad credentials' });
      const pull = state.pulls.find((p) => p.node_id === body?.variables?.id);
      if (!/mutation\b[\s\S]*markPullRequestReadyForReview\s*\(\s*input:/.test(body?.query ?? '') || !pull) {
        state.violations.push(`graphql: not a markPullRequestReadyForReview of a known pull request: ${raw.slice(0, 200)}`);
        return send(200, { errors: [{ message: 'Could not resolve to a node' }] });
      }
      pull.draft = false;
      return send(200, { data: { markPullRequestReadyForReview: { pullRequest: { isDraft: false } } } });
    }
    const route = ROUTES.find((r) => r.method === method && r.pattern.test(url.pathname));
    if (!route) {
      state.violations.push(`${method.toUpperCase()} ${url.pathname}: not an endpoint this fake implements`);
      return send(404, { message: 'Not Found' });
    }
    const params = route.pattern.exec(url.pathname)!.groups ?? {};
    const operation = openApi().spec.paths[route.template][route.method];
    state.requests.push({ method, path: url.pathname, operation: operation.operationId, query, body, authorization });
    if (authorization !== `token ${options.token}`) return send(401, { message: 'Requires authentication' });
    const before = state.violations.length;
    // The request: only parameters the operation declares, each of its schema; the body of its schema.
    const declared = new Map<string, Schema>();
    for (const p of operation.parameters ?? []) {
      const param = resolve(p);
      if (param.in === 'query') declared.set(param.name, param.schema);
    }
    for (const [name, value] of Object.entries(query)) {
      const schema = declared.get(name);
      if (!schema) {
        state.violations.push(`${operation.operationId}: query parameter '${name}' is not in the description`);
        continue;
      }
      const typed = resolve(schema).type === 'integer' && /^\d+$/.test(value) ? Number(value) : value;
      check(`${operation.operationId} query ${name}`, validator(`${operation.operationId} q ${name}`, schema), typed);
    }
    const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
    if (bodySchema) check(`${operation.operationId} request body`, validator(`${operation.operationId} request`, bodySchema), body);
    else if (body !== undefined) state.violations.push(`${operation.operationId}: a body, where the description has none`);
    if (state.violations.length > before) return send(500, { message: `fake GitHub: the request strays from the description: ${state.violations.at(-1)}` });
    // The response: a status the operation lists, and a body of its schema.
    const answered = answer(route, params, query, body ?? {});
    const response = resolve(operation.responses[String(answered.status)] ?? {});
    const schema = response.content?.['application/json']?.schema;
    if (!operation.responses[String(answered.status)]) {
      state.violations.push(`${operation.operationId}: status ${answered.status} is not among its responses`);
    } else if (schema) {
      let out = answered.body;
      const resolved = resolve(schema);
      if (resolved.type === 'array') out = (answered.body as unknown[]).map((item) => deepMerge(sampleOf(resolved.items), item));
      else if (resolved.type === 'object') {
        out = deepMerge(sampleOf(resolved), answered.body);
        const listKey = Object.keys(resolved.properties ?? {}).find((k) => resolved.properties[k].type === 'array' && Array.isArray((answered.body as any)[k]));
        if (listKey)
          (out as any)[listKey] = ((answered.body as any)[listKey] as unknown[]).map((item) => deepMerge(sampleOf(resolved.properties[listKey].items), item));
      }
      check(`${operation.operationId} response ${answered.status}`, validator(`${operation.operationId} ${answered.status}`, schema), out);
      return send(answered.status, out);
    }
    return send(answered.status, answered.body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      state.violations.push(`fake GitHub failed: ${error.message}`);
      res.writeHead(500).end();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
