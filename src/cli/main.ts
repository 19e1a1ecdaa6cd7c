#!/usr/bin/env node
import { Command } from 'commander';
import { z } from 'zod';
import { checkFileReferences, fileReferenceWarnings } from '../process/fileReferences.js';
import { ConfigError } from '../core/config/load.js';
import { loadConfigFile } from '../process/loadConfig.js';
import { configSchema } from '../process/configSchema.js';
import { startGslbd } from '../process/gslbdProcess.js';
import { registerDnssecCommands } from './dnssecCommands.js';
import { registerGeoCommands } from './geoCommands.js';
import { registerAgentCommand } from './agentCommand.js';

/**
 * The `gslbd` command line (docs/PRODUCT.md §7): serve, check-config, schema, explain, agent, geo build|lookup, dnssec keygen|ds.
 * Exit codes: 0 success, 1 invalid input (configuration, arguments), 2 runtime failure.
 */
const program = new Command().name('gslbd').description('Global server load balancing engine for authoritative DNS').showHelpAfterError();

program
  .command('serve')
  .description('run the engine with its front doors until SIGINT/SIGTERM')
  .argument('<config>', 'configuration file (YAML or JSON)')
  .action(async (file: string) => {
    try {
      const running = await startGslbd(file);
      const stop = (signal: string): void => {
        running.log.info({ signal }, 'stopping');
        void running.stop().then(() => process.exit(0));
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
    } catch (e) {
      process.stderr.write(`gslbd: ${(e as Error).message}\n`);
      process.exit(e instanceof ConfigError ? 1 : 2);
    }
  });

program
  .command('check-config')
  .description('validate a configuration file; prints every problem with its path')
  .argument('<config>', 'configuration file (YAML or JSON)')
  .action((file: string) => {
    try {
      const { config } = loadConfigFile(file);
      checkFileReferences(config, file);
      for (const w of fileReferenceWarnings(config, file)) process.stderr.write(`warning: ${w.path}: ${w.message}\n`);
      process.stdout.write(
        `${file}: OK (${config.zones.length} zones, ${config.datacenters.length} data centers, ${config.services.length} services, ${config.records.length} GSLB records)\n`,
      );
    } catch (e) {
      process.stderr.write(`${(e as Error).message}\n`);
      process.exit(1);
    }
  });

program
  .command('schema')
  .description('print the JSON Schema of the configuration file (for editors)')
  .action(() => {
    process.stdout.write(`${JSON.stringify(z.toJSONSchema(configSchema, { io: 'input', unrepresentable: 'any' }), null, 2)}\n`);
  });

program
  .command('explain')
  .description('ask a running engine how it answers a name for a client (GET /explain)')
  .argument('<name>', 'query name')
  .argument('[type]', 'query type', 'A')
  .requiredOption('-c, --client <address>', 'client address, or addr/len as an ECS source prefix')
  .option('--admin <url>', 'admin listener URL', 'http://127.0.0.1:8053')
  .option('--dnssec', 'ask with the DO bit: show what the DNSSEC signer does to the answer')
  .action(async (name: string, type: string, opts: { client: string; admin: string; dnssec?: boolean }) => {
    const url = new URL('/explain', opts.admin);
    url.searchParams.set('name', name);
    url.searchParams.set('type', type);
    url.searchParams.set('client', opts.client);
    if (opts.dnssec) url.searchParams.set('do', '1');
    try {
      const res = await fetch(url);
      process.stdout.write(await res.text());
      if (!res.ok) process.exit(1);
    } catch (e) {
      process.stderr.write(`gslbd: cannot reach ${opts.admin}: ${(e as Error).message}\n`);
      process.exit(2);
    }
  });

registerGeoCommands(program);
registerDnssecCommands(program);
registerAgentCommand(program);

await program.parseAsync();
