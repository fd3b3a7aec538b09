// The modes of what huddle keeps for the person (.team/: logs, transcripts, inboxes, the board,
// run records, local settings): owner-only, given on every mkdir and open so no umask widens them
// (a mode only loses bits to the umask), and restored on an older tree by team-privacy.ts.
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
