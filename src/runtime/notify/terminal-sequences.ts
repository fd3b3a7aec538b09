// The escape sequences that get a person's attention through their terminal: the bell, desktop
// notifications (OSC 9: iTerm2, WezTerm, kitty, Ghostty, Windows Terminal; OSC 777: urxvt, foot,
// VTE), the window/tab title (OSC 2, with the title stack to restore it), and tmux's pass-through,
// without which tmux swallows OSC 9/777 (it needs `set -g allow-passthrough on`).

const ESC = '\x1b';
const BEL = '\x07';
const ST = `${ESC}\\`;

export const BELL = BEL;

/** Control characters would end or corrupt the sequence; a notification is one short line. */
export function sanitize(text: string, max = 200): string {
  // eslint-disable-next-line no-control-regex
  const flat = text
    .replace(/[\x00-\x1f\x7f-\x9f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function osc9(message: string): string {
  return `${ESC}]9;${sanitize(message)}${BEL}`;
}

/** OSC 777 separates fields with ';', so the title may not hold one. */
export function osc777(title: string, body: string): string {
  return `${ESC}]777;notify;${sanitize(title, 80).replace(/;/g, ',')};${sanitize(body)}${BEL}`;
}

export function setTitle(title: string): string {
  return `${ESC}]2;${sanitize(title, 120)}${BEL}`;
}

/** Saves the current title on the terminal's title stack (xterm's XTWINOPS 22). */
export const PUSH_TITLE = `${ESC}[22;0t`;
/** Restores the title saved by PUSH_TITLE. */
export const POP_TITLE = `${ESC}[23;0t`;

/** Wraps a sequence so tmux hands it to the outer terminal unchanged. */
export function tmuxPassThrough(sequence: string): string {
  return `${ESC}Ptmux;${sequence.replaceAll(ESC, ESC + ESC)}${ST}`;
}

export type DesktopProtocol = 'osc9' | 'osc777';

/** Which desktop notification the terminal understands, from what it says about itself. */
export function detectDesktopProtocol(env: NodeJS.ProcessEnv): DesktopProtocol {
  const term = env.TERM ?? '';
  if (/^(rxvt|foot)/.test(term) || env.VTE_VERSION) return 'osc777';
  return 'osc9';
}
