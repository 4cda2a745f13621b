/**
 * Exponential backoff with jitter, capped: 2, 4, 8 … seconds up to 5 minutes, for a queue message
 * retried. On the issuance queue (max_retries 100) that is hours of retrying; past that the
 * dead-letter consumer records it and the cron sweep (documents untouched for 10 minutes) keeps
 * re-driving, so nothing is ever dropped.
 */
export function backoffSeconds(attempt: number, capSeconds = 300): number {
  const ceiling = Math.min(capSeconds, 2 ** Math.min(attempt, 20));
  return Math.max(1, Math.round(ceiling / 2 + Math.random() * (ceiling / 2)));
}
