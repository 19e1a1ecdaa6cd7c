import type { Command } from 'commander';
import { checkFileReferences, fileProblemsOfValidSections, fileReferenceWarnings } from '../process/fileReferences.js';
import { ConfigError } from '../core/config/load.js';
import { loadConfigFile } from '../process/loadConfig.js';
import { configJsonSchema, jsonSchemaOf } from '../process/configSchema.js';
import { startGslbd } from '../process/gslbdProcess.js';
import { notifyServiceManager } from '../process/serviceNotify.js';
import { takeOverFromParent } from '../process/processHandover.js';
import { logFatal } from '../core/telemetry/logger.js';

/**
 * `gslbd serve CONFIG` (docs/PRODUCT.md §7): runs the engine with its front doors until SIGINT or
 * SIGTERM. Exit codes: 1 invalid configuration, 2 runtime failure. Completes the `serve` command
 * main.ts created (this module loads the engine, so main.ts imports it only for this command).
 */
export function registerServeCommand(serve: Command): void {
  serve.argument('<config>', 'configuration file (YAML or JSON)').action(async (file: string) => {
    try {
      // Started by `gslbd ctl replace`: the sockets come from the running engine.
      const takeOver = takeOverFromParent();
      const running = await startGslbd(file, { ...(takeOver ? { takeOver } : {}), onReplaced: () => process.exit(0) });
      // systemd Type=notify: started once the configuration is loaded and every listener is open
      // (a replacement is announced by the process it replaces, the main process until it exits).
      if (!takeOver) notifyServiceManager(`READY=1\nSTATUS=serving generation ${running.engine.snapshot.generation}\nMAINPID=${process.pid}`, running.log);
      const stop = (signal: string): void => {
        running.log.info({ signal }, 'stopping');
        notifyServiceManager('STOPPING=1', running.log);
        void running.stop().then(() => process.exit(0));
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
    } catch (e) {
      const code = e instanceof ConfigError ? 1 : 2;
      // Text for the person at the terminal, one JSON line for the log pipeline reading stdout.
      process.stderr.write(`gslbd: ${(e as Error).message}\n`);
      logFatal(e as Error, { exitCode: code, ...(e instanceof ConfigError ? { problems: e.problems } : {}) });
      process.exit(code);
    }
  });
}

/**
 * `gslbd check-config CONFIG` (docs/PRODUCT.md §7): every problem of the file in one run (schema,
 * references, files); exit 1 when there is one. Completes the `check-config` command main.ts created.
 */
export function registerCheckConfigCommand(check: Command): void {
  check.argument('<config>', 'configuration file (YAML or JSON)').action((file: string) => {
    try {
      let config;
      try {
        config = loadConfigFile(file).config;
      } catch (e) {
        // Every problem in one run: the files of the sections that passed the schema too.
        if (!(e instanceof ConfigError) || e.data === undefined) throw e;
        throw new ConfigError(file, [...e.problems, ...fileProblemsOfValidSections(e.data, file)]);
      }
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
}

/**
 * `gslbd schema [--agent]`: the JSON Schema of the configuration file on stdout, or with `--agent`
 * that of the agent's file (`gslbd agent agent.yaml`, src/agent/agentSchema.ts), written the same
 * way (draft 2020-12, input side, a description on every property). Completes the `schema`
 * command main.ts created.
 */
export function registerSchemaCommand(schema: Command): void {
  schema.option('--agent', 'the JSON Schema of the agent configuration file (gslbd agent) instead').action(async (opts: { agent?: boolean }) => {
    // The agent's schema loads only when asked: `serve` shares this file.
    const json = opts.agent ? jsonSchemaOf((await import('../agent/agentSchema.js')).agentConfigSchema) : configJsonSchema();
    process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
  });
}
