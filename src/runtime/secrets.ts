// The credentials huddle holds (the API key, an auth token) and how they are kept out of every
// text huddle writes or hands to a model: logs, transcripts, stdout, tool results. A secret is
// also recognised in the forms a command would print it in without trying hard: base64 (plain
// and URL-safe, at each of the three byte alignments, so that it is found inside a longer
// encoded blob too), percent-encoding, hex and reversed.
//
// Every scrub() redacts every registered secret, whatever list its caller holds: a credential
// learnt after a store or a face was opened (the database password from ~/.pgpass, a token in the
// environment) is redacted there too (docs/trust.md).

/** Shorter strings are not redacted: they would match ordinary text. */
const MIN_SECRET_LENGTH = 8;
/** Base64 runs shorter than this are too likely to occur by chance. */
const MIN_ENCODED_LENGTH = 12;

const known = new Set<string>();

/** Remembers a credential of this process, so that every later scrub() without a list redacts it. */
export function registerSecret(secret: string | undefined): void {
  if (secret && secret.length >= MIN_SECRET_LENGTH) known.add(secret);
}

const files = new Set<string>();

/** A file that holds a credential (`--api-key-file`): sandboxed commands never see its content. */
export function registerSecretFile(file: string): void {
  files.add(file);
}

export function registeredSecretFiles(): string[] {
  return [...files];
}

/** The credentials registered so far. */
export function registeredSecrets(): string[] {
  return [...known];
}

/**
 * Environment variables that hold credentials by name: the database password, the GitHub tokens,
 * and anything called *_TOKEN, *_KEY, *_SECRET, *_PASSWORD (API keys of every provider).
 */
const SECRET_ENV =
  /^(?:PGPASSWORD|GH_TOKEN|GITHUB_TOKEN|GH_ENTERPRISE_TOKEN|GITHUB_ENTERPRISE_TOKEN|.*_(?:TOKEN|KEY|SECRET|PASSWORD|PASSWD|CREDENTIALS?)(?:_\w+)?)$/i;
/** Values of such names that are no secret: paths, booleans, numbers. */
const NOT_A_SECRET = /^(?:[/~.]|\w+:\/\/[^:@]*$|(?:true|false|yes|no|on|off|\d+)$)/i;

/** The names of environment variables registerEnvSecrets() treats as credentials. */
export function isSecretEnvName(name: string): boolean {
  return SECRET_ENV.test(name) && !/^(?:SSH_AUTH_SOCK|GPG_AGENT_INFO|.*_KEY_?(?:FILE|PATH|ID))$/i.test(name);
}

/** Registers every credential-named variable of `env` (its value): redacted everywhere from now on. */
export function registerEnvSecrets(env: NodeJS.ProcessEnv = process.env): void {
  for (const [name, value] of Object.entries(env)) {
    if (!value || !isSecretEnvName(name)) continue;
    const trimmed = value.trim();
    if (NOT_A_SECRET.test(trimmed)) continue;
    registerSecret(trimmed);
  }
}

/** Every spelling of a secret that scrub() replaces: itself, reversed, base64 (aligned 0, 1, 2), url-encoded, hex. */
export function secretForms(secret: string): string[] {
  const forms = new Set<string>([secret, [...secret].reverse().join(''), encodeURIComponent(secret), Buffer.from(secret).toString('hex')]);
  const bytes = Buffer.from(secret);
  for (let shift = 0; shift < 3; shift++) {
    // With `shift` unknown bytes before the secret, the base64 of the secret's bytes starts at
    // a character boundary only after the group that mixes them; the stable middle is what we match.
    const padded = Buffer.concat([Buffer.alloc(shift), bytes]);
    let encoded = padded.toString('base64').replace(/=+$/, '');
    const skip = shift === 0 ? 0 : 4; // the first group holds the unknown bytes
    const tail = padded.length % 3 === 0 ? 0 : 4; // the last group depends on what follows
    encoded = encoded.slice(skip, encoded.length - tail || undefined);
    if (encoded.length >= MIN_ENCODED_LENGTH) {
      forms.add(encoded);
      forms.add(encoded.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  return [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
}

/** `value` with every string in it (however deep) scrubbed: what an agent stores for others to read. */
export function scrubStrings<T>(value: T): T {
  if (!known.size) return value;
  if (typeof value === 'string') return scrub(value) as T;
  if (Array.isArray(value)) return value.map((item) => scrubStrings(item)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, scrubStrings(item)])) as T;
  }
  return value;
}

const formsCache = new Map<string, string[]>();

/** The text with every form of every secret replaced by `[redacted]`: those given, and every registered one. */
export function scrub(text: string, secrets: readonly string[] = []): string {
  let out = text;
  const all = secrets.length ? new Set([...secrets, ...known]) : known;
  for (const secret of all) {
    if (!secret || secret.length < MIN_SECRET_LENGTH) continue;
    let forms = formsCache.get(secret);
    if (!forms) {
      forms = secretForms(secret);
      formsCache.set(secret, forms);
    }
    for (const form of forms) if (out.includes(form)) out = out.split(form).join('[redacted]');
  }
  return out;
}
