// The credentials huddle holds (the API key, an auth token) and how they are kept out of every
// text huddle writes or hands to a model: logs, transcripts, stdout, tool results. A secret is
// also recognised in the forms a command would print it in without trying hard: base64 (plain
// and URL-safe, at each of the three byte alignments, so that it is found inside a longer
// encoded blob too), percent-encoding and hex.

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

/** Every spelling of a secret that scrub() replaces: itself, base64 (aligned 0, 1, 2), url-encoded, hex. */
export function secretForms(secret: string): string[] {
  const forms = new Set<string>([secret, encodeURIComponent(secret), Buffer.from(secret).toString('hex')]);
  const bytes = Buffer.from(secret);
  for (let shift = 0; shift < 3; shift++) {
    // With `shift` unknown bytes before the secret, the base64 of the secret's bytes starts at
    // a character boundary only after the group that mixes them; the stable middle is what we match.
    const padded = Buffer.concat([Buffer.alloc(shift), bytes]);
    let encoded = padded.toString('base64').replace(/=+$/, '');
    const skip = shift === 0 ? 0 : 4; // the first group holds the unknown bytes
    const tail = (padded.length % 3) === 0 ? 0 : 4; // the last group depends on what follows
    encoded = encoded.slice(skip, encoded.length - tail || undefined);
    if (encoded.length >= MIN_ENCODED_LENGTH) {
      forms.add(encoded);
      forms.add(encoded.replace(/\+/g, '-').replace(/\//g, '_'));
    }
  }
  return [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
}

const formsCache = new Map<string, string[]>();

/** The text with every form of every secret replaced by `[redacted]` (the registered ones when no list is given). */
export function scrub(text: string, secrets: readonly string[] = registeredSecrets()): string {
  let out = text;
  for (const secret of secrets) {
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
