// What the shell reader (shell-syntax.ts) makes of a command line: scripts of pipelines of simple
// commands, each a list of words after quote removal. Types only, shared by the reader and the policy.

export interface Word {
  /** The word after quote removal; expansions resolved where that is possible, else their source text. */
  text: string;
  /** The same with every unresolved expansion taken as empty (what `$DIR/*` becomes when DIR is unset). */
  emptyText: string;
  /** Holds an expansion whose value is only known when it runs. */
  dynamic: boolean;
  /** Some part was quoted or escaped: never a reserved word. */
  quoted: boolean;
  /** Unquoted glob characters. */
  glob: boolean;
  /** Starts with an unquoted `~`. */
  tilde: boolean;
  /** A process substitution `<(…)` / `>(…)`: a path to the output of a command. */
  procSub: boolean;
  /** `NAME=value` (unquoted name and `=`). */
  assignment?: { name: string; value: string; dynamic: boolean };
  /** Scripts that command or process substitutions in this word run. */
  subs: Script[];
  /** The source text. */
  raw: string;
}

export interface Redirect {
  op: string;
  fd?: string;
  target?: Word;
  /** The body of a here-document (`<<`), and the scripts its expansions run. */
  heredoc?: { body: string; subs: Script[] };
}

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
  /** The command as written, for messages. */
  display: string;
}

export interface Pipeline {
  commands: SimpleCommand[];
}

export interface Script {
  pipelines: Pipeline[];
  /** Names of functions defined to call themselves in a pipe or the background. */
  forkBombs: string[];
  /** Functions this line defines: name → the source of the body (checked again at each call, with its arguments). */
  functions: Map<string, string>;
  /** Things the reader could not make sense of (unterminated quotes, nesting too deep). */
  problems: string[];
}
