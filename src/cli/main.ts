#!/usr/bin/env -S node --min-semi-space-size=16
import { Command } from 'commander';
import { registerCtlCommands, registerExplainAlias } from './ctlCommands.js';
import { GSLBD_VERSION } from '../core/telemetry/buildInfo.js';

/**
 * The `gslbd` command line (docs/PRODUCT.md §7): serve, check-config, schema, ctl (explain), agent, geo build|lookup, dnssec keygen|ds.
 * Exit codes: 0 success, 1 invalid input (configuration, arguments), 2 runtime failure.
 *
 * Only `ctl` (and `explain`) is defined up front: it needs nothing but `fetch`. Every other command
 * is listed by name and description, and its module — which imports the engine, the agent, the
 * location data or the DNSSEC code — is loaded only when the command line names it. Loading the
 * engine costs about a second of CPU, which `gslbd ctl` in a script loop must not pay.
 */
const program = new Command()
  .name('gslbd')
  .description('Global server load balancing engine for authoritative DNS')
  .version(GSLBD_VERSION)
  .showHelpAfterError()
  .addHelpText('after', '\nExit codes: 0 success, 1 invalid input (configuration, arguments) or a request the engine refused, 2 runtime failure.');

/** A command whose definition lives in a module loaded on demand. */
interface LazyCommand {
  readonly name: string;
  readonly description: string;
  /** Loads the module and completes the command (arguments, options, sub-commands, action). */
  readonly complete: (command: Command) => Promise<void>;
}

const LAZY_COMMANDS: readonly LazyCommand[] = [
  {
    name: 'serve',
    description: 'run the engine with its front doors until SIGINT/SIGTERM',
    complete: async (c) => (await import('./engineCommands.js')).registerServeCommand(c),
  },
  {
    name: 'check-config',
    description: 'validate a configuration file; prints every problem with its path',
    complete: async (c) => (await import('./engineCommands.js')).registerCheckConfigCommand(c),
  },
  {
    name: 'schema',
    description: 'print the JSON Schema of the configuration file, or with --agent of the agent configuration file (for editors)',
    complete: async (c) => (await import('./engineCommands.js')).registerSchemaCommand(c),
  },
  {
    name: 'simulate',
    description: 'replay a query log against a candidate configuration, on the running engine or without one (--against FILE)',
    complete: async (c) => (await import('./simulateCommand.js')).registerSimulateCommand(c),
  },
  {
    name: 'geo',
    description: 'location data: build compiled files, look addresses up',
    complete: async (c) => (await import('./geoCommands.js')).registerGeoCommands(c),
  },
  {
    name: 'dnssec',
    description: 'DNSSEC keys: generate key files, print DS records for the parent',
    complete: async (c) => (await import('./dnssecCommands.js')).registerDnssecCommands(c),
  },
  {
    name: 'agent',
    description: 'run the measuring agent of a data center or proximity zone (host, HAProxy, probes) and report to the engines',
    complete: async (c) => (await import('./agentCommand.js')).registerAgentCommand(c),
  },
];

/** The command the arguments name: the first word that is not an option (`gslbd help geo` names `geo`). */
function namedCommand(args: readonly string[]): string | undefined {
  const words = args.filter((a) => !a.startsWith('-'));
  return words[0] === 'help' ? words[1] : words[0];
}

const named = namedCommand(process.argv.slice(2));
for (const lazy of LAZY_COMMANDS) {
  const command = program.command(lazy.name).description(lazy.description);
  if (lazy.name === named) await lazy.complete(command);
}
registerCtlCommands(program);
registerExplainAlias(program);

await program.parseAsync();
