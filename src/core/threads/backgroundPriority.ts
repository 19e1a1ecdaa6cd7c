import { setPriority } from 'node:os';

/**
 * Nice value of the engine's background threads (the configuration reader, the location-data
 * compiler): below the engine thread's, so when both are runnable the scheduler runs the thread
 * that answers queries first. Parsing a 20,000-record configuration or compiling location data
 * takes a core for seconds, and on a machine with as few cores as the engine has threads busy
 * (2 cores: the engine thread, a worker, a DNS server and the resolvers' load) an equal share
 * delays every query behind it (issue 17: reloads that never stop answering). 10 leaves the
 * worker about a tenth of a contended core (the CFS weights of nice 0 and 10 are 1024 and 110),
 * so a reload still ends while the engine is busy.
 */
export const BACKGROUND_NICE = 10;

/**
 * Lowers the calling thread's priority to {@link BACKGROUND_NICE}. Linux keeps the nice value per
 * thread, and `setpriority(PRIO_PROCESS, 0, …)` — what `os.setPriority(0, …)` calls — sets the
 * calling thread's only (setpriority(2), NOTES), so a worker thread lowers itself and not the
 * engine thread. Raising a nice value needs no privilege; where it fails (another OS, a seccomp
 * filter) the thread keeps its priority and nothing else changes.
 * @returns whether the priority was set.
 */
export function lowerThreadPriority(): boolean {
  try {
    setPriority(0, BACKGROUND_NICE);
    return true;
  } catch {
    return false;
  }
}
