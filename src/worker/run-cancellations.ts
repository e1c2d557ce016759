/**
 * The steps running in this process, by run: a cancellation broadcast (pub/sub) aborts the signals of the
 * run's in-flight steps, so model requests and tool handlers stop at once.
 */
export class RunCancellations {
  private readonly running = new Map<string, Set<AbortController>>();

  /**
   * A signal for one step of a run, aborted by a cancellation of the run or by `outer` (BullMQ's, on
   * shutdown); call release() when the step ends. (Cheaper than AbortSignal.any, which every step would pay.)
   */
  watch(runId: string, outer?: AbortSignal): { signal: AbortSignal; release: () => void } {
    const controller = new AbortController();
    let controllers = this.running.get(runId);
    if (!controllers) {
      controllers = new Set();
      this.running.set(runId, controllers);
    }
    controllers.add(controller);
    const forward = () => controller.abort(outer?.reason);
    if (outer?.aborted) forward();
    else outer?.addEventListener('abort', forward, { once: true });
    return {
      signal: controller.signal,
      release: () => {
        outer?.removeEventListener('abort', forward);
        controllers.delete(controller);
        if (controllers.size === 0) this.running.delete(runId);
      },
    };
  }

  cancel(runId: string): number {
    const controllers = this.running.get(runId);
    if (!controllers) return 0;
    for (const controller of controllers) controller.abort(new Error(`run ${runId} was cancelled`));
    return controllers.size;
  }
}
