import { realpathSync } from 'node:fs';
import { dirname, relative, resolve as resolvePath } from 'node:path';
import { Option, type Command } from 'commander';
import { ConfigError } from '../core/config/load.js';
import { simulateReplay } from '../process/simulation.js';
import { CTL_ENV, getFromEngine, replayOnEngine } from './ctlCommands.js';
import { parseWhatIf, WHAT_IF_FORMS, type WhatIfRequest } from './whatIfArguments.js';
import { formatReplaySummary, parseCapacities, readQueryFile, summariseReplay, type LoggedQuery } from './whatIfReplay.js';

/** Exit codes of `gslbd simulate`. */
export const SIMULATE_EXIT = { ok: 0, refused: 1, unreachable: 2 } as const;

/**
 * `gslbd simulate --config CANDIDATE [--against running|FILE] --queries LOG [--what-if CHANGE]... [--json]`:
 * the query log (`whatIfReplay.ts`) replayed against a candidate configuration, summarised as
 * `gslbd ctl what-if` does (per-DC answer shares before and after, moves, the networks that move).
 * `--against running` (the default) asks the running engine (`POST /what-if/replay`, the
 * candidate named relative to the running configuration's directory, as the engine requires);
 * `--against FILE` needs no engine: both files are compiled here (`src/process/simulation.ts`,
 * every endpoint up, no pushed metrics) and replayed through the same function as the route.
 * `--capacity DC=SHARE%` (repeatable) lists the data centers whose share exceeds it; capacities are
 * an option, not configuration, because the engine never reads them (a planning figure of the
 * operator's, the same for both sides, and `--against running` has no candidate field to read).
 */
export function registerSimulateCommand(cmd: Command): void {
  cmd
    .requiredOption('--config <file>', 'the candidate configuration')
    .option('--against <running|file>', 'compare with the running engine, or with a configuration file (no engine needed)', 'running')
    .requiredOption(
      '--queries <file>',
      "the engine's query log (JSON lines), a packet capture (pcap, pcapng), a dnstap file, or a dnsperf data file (text or -B)",
    )
    .option('--edns <code:hex>', "for a dnsperf text file: the EDNS option dnsperf's -E adds to every query (code 8, ECS: its prefix is every query's client)")
    .option('--source <address>', 'for a dnsperf file: the client of queries without ECS (the address dnsperf sends from)', '127.0.0.1')
    .option('--what-if <change>', 'a hypothesis over the state too (repeatable; the forms of `ctl explain --what-if`, without config=)', collect, [])
    .addOption(new Option('--admin <url>', 'admin listener URL (with --against running)').env(CTL_ENV.admin).default('http://127.0.0.1:8053'))
    .option('--capacity <dc=share%>', 'the most of the answers a data center may take (repeatable); those over it, before or after, are listed', collect, [])
    .option('--json', 'print the summary as JSON')
    .addHelpText(
      'after',
      `\n--what-if forms:\n  ${WHAT_IF_FORMS.join('\n  ')}\nExit codes: 0 done, 1 refused (invalid file or hypothesis), 2 engine unreachable.`,
    )
    .action(
      async (opts: {
        config: string;
        against: string;
        queries: string;
        edns?: string;
        source: string;
        whatIf: string[];
        capacity: string[];
        admin: string;
        json?: boolean;
      }) => {
        let whatIf: WhatIfRequest;
        let queries: LoggedQuery[];
        let capacity: Record<string, number>;
        try {
          whatIf = parseWhatIf(opts.whatIf);
          capacity = parseCapacities(opts.capacity);
          if (whatIf.config !== undefined) throw new Error('--what-if config=FILE: give the candidate with --config');
          ({ queries } = await readQueryFile(opts.queries, { edns: opts.edns, source: opts.source }));
        } catch (e) {
          return fail((e as Error).message, SIMULATE_EXIT.refused);
        }
        try {
          const rows =
            opts.against === 'running'
              ? await replayOnEngine({ admin: opts.admin }, { ...whatIf, config: await candidateForEngine(opts.admin, opts.config) }, queries)
              : simulateReplay({ against: opts.against, candidate: opts.config, whatIf }, queries);
          const summary = summariseReplay(queries, rows, capacity);
          process.stdout.write(`${opts.json ? JSON.stringify(summary, null, 2) : formatReplaySummary(summary)}\n`);
        } catch (e) {
          const code = (e as { code?: unknown }).code;
          return fail((e as Error).message, e instanceof ConfigError || typeof code !== 'number' ? SIMULATE_EXIT.refused : code);
        }
      },
    );
}

/** The candidate's path relative to the running configuration's directory (`GET /status` `configFile`), as `config` in a hypothesis. */
async function candidateForEngine(admin: string, candidate: string): Promise<string> {
  const status = (await getFromEngine({ admin }, '/status')) as { configFile: string };
  return relative(realpathSync(dirname(status.configFile)), realpathSync(resolvePath(candidate)));
}

function fail(message: string, code: number): void {
  process.stderr.write(`gslbd simulate: ${message}\n`);
  process.exitCode = code;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
