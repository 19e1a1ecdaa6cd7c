import { probesSchema } from '../../src/agent/probes/probeSchema.js';
import { Prober } from '../../src/agent/probes/prober.js';

/**
 * Runs the agent's {@link Prober} once toward one address and prints its results as one JSON line:
 * for probing from inside a network namespace (`RoutedPath.run`; Node cannot enter one itself).
 * Arguments: the `probes` configuration as JSON, the target address and, optionally, `stallMs`: while
 * probing, the event loop is blocked that long out of every `stallMs + 5` ms (a stand-in for a busy
 * agent), so replies are read late. It sleeps (`Atomics.wait`) rather than spins, so the peers of the
 * test bed keep the CPU they need to answer on time.
 */
const [configJson, target, stall] = process.argv.slice(2) as [string, string, string | undefined];
const stallMs = Number(stall ?? 0);
const staller = stallMs > 0 ? setInterval(() => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, stallMs), 5) : undefined;
const results = await new Prober(probesSchema.parse(JSON.parse(configJson))).probe(target);
clearInterval(staller);
process.stdout.write(`${JSON.stringify(results)}\n`);
