/**
 * Runs `total` units with at most `parallel` in flight: each slot starts its next unit as soon as its previous
 * one ends, so the load stays at `parallel` until the last units drain.
 */
export async function runInSlots(
  total: number,
  parallel: number,
  runUnit: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const slot = async (): Promise<void> => {
    while (next < total) {
      const index = next;
      next += 1;
      await runUnit(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, total) }, slot));
}
