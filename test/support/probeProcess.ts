import { probesSchema } from '../../src/agent/probes/probeSchema.js';
import { Prober } from '../../src/agent/probes/prober.js';

/**
 * Runs the agent's {@link Prober} once toward one address and prints its results as one JSON line:
 * for probing from inside a network namespace (`RoutedPath.run`; Node cannot enter one itself).
 * Arguments: the `probes` configuration as JSON, the target address.
 */
const [configJson, target] = process.argv.slice(2) as [string, string];
const results = await new Prober(probesSchema.parse(JSON.parse(configJson))).probe(target);
process.stdout.write(`${JSON.stringify(results)}\n`);
