const labels: Record<string, string> = {
  queued: 'queued',
  running: 'running',
  waiting: 'waiting',
  waiting_input: 'waiting for input',
  waiting_for_worker: 'waiting for a worker',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** A run's status as a word with a colour (the word carries the meaning; the colour only helps). */
export function StatusBadge({ status, testId }: { status: string; testId?: string }) {
  return (
    <span class={`status status-${status}`} data-testid={testId} data-status={status}>
      {labels[status] ?? status}
    </span>
  );
}
