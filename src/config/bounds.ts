/**
 * The bounds of the numbers a configuration file or a flag names, one place for both: past them a
 * value is of no use, or makes every run fail.
 */

/** The most processes a limit may name: Linux's largest process id (`pid_max`'s ceiling). */
export const MAX_PROCESSES = 4_194_304;
/** The smallest memory limit bash and its usual programs start under. */
export const MIN_MEMORY = 16 * 2 ** 20;
/** The smallest file size limit: below it a build's object files and logs do not fit. */
export const MIN_FILE_SIZE = 2 ** 20;
/** The smallest context window that holds the system prompt, the tools and a turn. */
export const MIN_CONTEXT_WINDOW = 4096;
/** Larger than any model's window or any run's turns. */
export const MAX_COUNT = 100_000_000;
