/**
 * Milliseconds from a fixed point, for durations: a monotonic clock like `performance.now()`,
 * without it. In Node the global `performance` is made at its first use, loading `perf_hooks`
 * and a dozen modules with it (about 1% of a short run's start-up).
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
