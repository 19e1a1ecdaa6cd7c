import type { Command } from 'commander';
import { loadAgentConfig, startAgent } from '../agent/agentProcess.js';
import { measureOnce } from '../agent/once.js';
import { ConfigError } from '../core/config/load.js';

/**
 * `gslbd agent <config>` (docs/PRODUCT.md §7, src/agent/README.md): runs the agent until SIGINT or
 * SIGTERM; `--once` measures every source over one window and prints the JSON a report would carry,
 * contacting no engine. Exit codes: 0 success, 1 invalid configuration, 2 runtime failure. Completes
 * the `agent` command main.ts created.
 */
export function registerAgentCommand(agent: Command): void {
  agent
    .argument('<config>', 'agent configuration file (YAML or JSON)')
    .option('--once', 'measure every source once, print the result as JSON and exit (no report is sent)')
    .option('--window <seconds>', 'with --once: the window rates and CPU are measured over', '2')
    .action(async (file: string, opts: { once?: boolean; window: string }) => {
      try {
        if (opts.once) {
          const window = Number(opts.window);
          if (!(window > 0 && window <= 600)) throw new ConfigError(file, [{ path: '--window', message: 'a number of seconds in (0, 600]' }]);
          process.stdout.write(`${JSON.stringify(await measureOnce(loadAgentConfig(file), window * 1000), null, 2)}\n`);
          return;
        }
        const running = await startAgent(file);
        const stop = (signal: string): void => {
          running.log.info({ signal }, 'stopping');
          void running.stop().then(() => process.exit(0));
        };
        process.once('SIGINT', () => stop('SIGINT'));
        process.once('SIGTERM', () => stop('SIGTERM'));
      } catch (e) {
        process.stderr.write(`gslbd agent: ${(e as Error).message}\n`);
        process.exit(e instanceof ConfigError ? 1 : 2);
      }
    });
}
