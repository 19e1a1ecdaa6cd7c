import { lowerThreadPriority } from '../core/threads/backgroundPriority.js';

/**
 * Entry of the configuration worker (`configWorker.ts`): lowers the thread's priority before the
 * configuration modules load, so loading them (about half a second of CPU, again for each worker
 * that replaces one ended after a large read) gives way to the engine thread from the start.
 */
// The engine thread answers queries: it wins the CPU when both are runnable.
lowerThreadPriority();
await import('./configWorker.js');
