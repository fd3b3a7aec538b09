// The built-in webhook notifier (docs/console.md#notifications): each notification as one JSON POST
// {text, event, team, agent, …}, the shape Slack's, Mattermost's and Discord-style incoming webhooks take
// (`text`). The URL often holds a token, so it is never logged or shown: a failure names the status or the
// error code only, and is a warning to the caller, never fatal.

export interface WebhookPayload {
  /** One line a person reads ("carol sent a plan for your approval"). */
  text: string;
  /** plan, failure, approval, budget, done, question. */
  event: string;
  team: string;
  agent: string;
  /** Claude Code's notification_type (plan_approval, agent_failed, …). */
  notification_type?: string;
  [field: string]: unknown;
}

/** Posts `payload`; resolves to undefined when delivered, or a one-line reason (without the URL) when not. */
export async function postWebhook(url: string, payload: WebhookPayload, timeoutMs = 10_000): Promise<string | undefined> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
    // The body is not ours to read (it may echo the token): drain it unread.
    await response.body?.cancel();
    return response.ok ? undefined : `the notification webhook answered HTTP ${response.status}`;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    return `the notification webhook could not be reached (${cause})`;
  }
}
