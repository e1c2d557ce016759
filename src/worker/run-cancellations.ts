/**
 * The steps running in this process, by run: a cancellation broadcast (pub/sub) aborts the signals BullMQ
 * gave the run's in-flight steps (through `abortJob`), so model requests and tool handlers stop at once.
 * One signal per step, BullMQ's own: no controller of ours to create and link on every step.
 */
export class RunCancellations {
  private readonly running = new Map<string, Set<string>>();

  constructor(private readonly abortJob: (jobId: string, reason: string) => void) {}

  /** Registers a step (its job) of a run; call the returned release() when the step ends. */
  watch(runId: string, jobId: string): () => void {
    let jobs = this.running.get(runId);
    if (!jobs) {
      jobs = new Set();
      this.running.set(runId, jobs);
    }
    jobs.add(jobId);
    return () => {
      jobs.delete(jobId);
      if (jobs.size === 0) this.running.delete(runId);
    };
  }

  cancel(runId: string): number {
    const jobs = this.running.get(runId);
    if (!jobs) return 0;
    for (const jobId of jobs) this.abortJob(jobId, `run ${runId} was cancelled`);
    return jobs.size;
  }
}
