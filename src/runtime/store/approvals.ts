// The "needs you" queue: questions waiting for the person (ask-mode tool calls, budget stops,
// stalls and failures, plans). The console attaches as the answerer and shows the queue; without
// an answerer (a headless run, a test team) nothing can be asked, and a request is refused at once
// rather than left hanging. The contract every backend keeps (memory-approvals.ts today).

export type ApprovalDecision = 'approve' | 'deny' | 'always';
export type ApprovalKind = NonNullable<ApprovalRequest['kind']>;

export interface ApprovalRequest {
  id: string;
  agent: string;
  tool: string;
  /** 'budget': a budget stop (y extends, n stops the agent); 'notice': a stall or failure (y restarts); 'plan': a plan to decide; otherwise a tool call. */
  kind?: 'tool' | 'budget' | 'notice' | 'plan';
  /** One line: the command or the path. */
  summary: string;
  /** Why it needs approval. */
  reason: string;
  /** What "approve always" adds to the allow-list (.team/settings.local.json; empty: it cannot be allow-listed, e.g. a protected path). */
  prefixes: string[];
  /** What the call would do, for the person to judge (an edit's diff, the start of a file to write). */
  detail?: string;
  created_at: string;
}

export interface PendingApproval extends ApprovalRequest {
  /** `note`: the person's reason for a denial, told to the agent; `edited`: the person's own text of what is approved (a plan). */
  resolve(decision: ApprovalDecision, note?: string, edited?: string): void;
}

export type ApprovalOutcome =
  | { kind: 'approved'; always: boolean; note?: string; edited?: string }
  | { kind: 'denied'; reason?: string }
  /** Nobody can answer (headless) — the caller refuses. */
  | { kind: 'unanswerable' }
  /** The agent was interrupted or stopped while it waited. */
  | { kind: 'cancelled' };

/** The queue of questions for the person. */
export interface Approvals {
  /** True while someone (the console) can answer requests. */
  readonly answerable: boolean;
  /** The console calls this when it opens (every kind); a headless run's control socket for `kinds` only. The returned function detaches it. */
  attachAnswerer(kinds?: readonly ApprovalKind[]): () => void;
  /** True while someone can answer requests of this kind. */
  answerableFor(kind: ApprovalKind): boolean;
  /** Pending requests, oldest first. */
  list(): PendingApproval[];
  readonly size: number;
  onChange(listener: () => void): () => void;
  /** Queues a request; resolves when answered, when `signal` aborts, or when the queue closes. */
  request(request: Omit<ApprovalRequest, 'id' | 'created_at'>, signal?: AbortSignal): Promise<ApprovalOutcome>;
  /** The person's answer (with a denial, maybe why; with an approval, maybe their edit). False when there is no such request (already answered, or cancelled). */
  resolve(id: string, decision: ApprovalDecision, by?: string, note?: string, edited?: string): boolean;
  /** The person rewrote what waits (a plan) without deciding yet; false when there is no such request here. */
  revise(id: string, detail: string): boolean;
  /** Denies everything pending; later requests are unanswerable. */
  close(reason?: string): void;
}
