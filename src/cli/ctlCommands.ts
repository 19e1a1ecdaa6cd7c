import { readFileSync } from 'node:fs';
import { Argument, type Command, Option } from 'commander';
import type { ReplayRow } from '../admin/whatIfRoutes.js';
import { MAX_REPLAY_QUERIES } from '../admin/whatIfLimits.js';
import { parseWhatIf, WHAT_IF_FORMS, type WhatIfRequest } from './whatIfArguments.js';
import { formatReplaySummary, parseCapacities, readQueryFile, summariseReplay, type LoggedQuery } from './whatIfReplay.js';

/** Where `gslbd ctl` finds the engine and its token (never a token on the command line: `ps` shows arguments). */
export const CTL_ENV = {
  /** The admin listener URL (default `http://127.0.0.1:8053`). */
  admin: 'GSLBD_ADMIN_URL',
  /** The admin token itself. */
  token: 'GSLBD_TOKEN',
  /** A file holding the admin token (as `listeners.admin.tokenFile`). */
  tokenFile: 'GSLBD_TOKEN_FILE',
} as const;

/** Options every `ctl` command takes. */
export interface CtlOptions {
  readonly admin: string;
  readonly tokenFile?: string;
}

/** Exit codes of `gslbd ctl`, listed in `--help`. */
export const CTL_EXIT = { ok: 0, refused: 1, unreachable: 2, degraded: 3 } as const;

/** A request the engine refused or could not be sent: message and exit code. */
class CtlError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

/**
 * `gslbd ctl`: the admin API from the command line (docs/PRODUCT.md §7; routes in
 * src/admin/README.md and src/capabilities/health/README.md):
 * - `status`: `/status` (exit 3 while the engine is degraded);
 * - `drain DC` / `undrain DC`: every endpoint of a data center drained / its override cleared,
 *   in one published view;
 * - `override up|down|drain|none` with `--endpoint KEY`, or any of `--dc`, `--service`,
 *   `--endpoints GLOB` (over `service/dc/address`), `--cidr`;
 * - `health`: `/health`; `reload`: `POST /reload` (prints what changed);
 * - `explain NAME [TYPE] -c CLIENT`: `/explain` (the former `gslbd explain`, kept as an alias);
 *   with `--what-if CHANGE` (repeatable), `POST /explain/what-if`: the trace live and under the change;
 * - `what-if --queries LOG [--what-if CHANGE]... [--json]`: the query log replayed live and under the
 *   change (`POST /what-if/replay`, in batches), summarised by `whatIfReplay.ts`.
 * - `replace`: `POST /replace`, the seamless restart (src/process/README.md, "Replace"): a new
 *   engine process takes the sockets over; exit 1 when it failed and the running engine keeps serving.
 *
 * The token of mutating commands comes from `--token-file`, `$GSLBD_TOKEN_FILE` or `$GSLBD_TOKEN`,
 * never from an argument. Other command groups add their own `ctl` commands on the returned
 * command (process hand-over: `ctl replace`).
 * @returns the `ctl` command.
 */
export function registerCtlCommands(program: Command): Command {
  const ctl = program
    .command('ctl')
    .description('control a running engine through its admin API')
    .addOption(new Option('--admin <url>', 'admin listener URL').env(CTL_ENV.admin).default('http://127.0.0.1:8053'))
    .addOption(new Option('--token-file <file>', `file holding the admin token (else $${CTL_ENV.token})`).env(CTL_ENV.tokenFile))
    .addHelpText(
      'after',
      `
The token is read from --token-file, $${CTL_ENV.tokenFile} or $${CTL_ENV.token}; never give it as an argument.
Exit codes: ${CTL_EXIT.ok} done, ${CTL_EXIT.refused} refused (bad request, unknown name, missing or wrong token), ${CTL_EXIT.unreachable} engine unreachable, ${CTL_EXIT.degraded} status: the engine is degraded.`,
    );
  const run =
    <A extends unknown[]>(fn: (opts: CtlOptions, ...args: A) => Promise<number>) =>
    async (...args: A): Promise<void> => {
      try {
        process.exitCode = await fn(ctl.opts<CtlOptions>(), ...args);
      } catch (e) {
        if (!(e instanceof CtlError)) throw e;
        process.stderr.write(`gslbd ctl: ${e.message}\n`);
        process.exitCode = e.code;
      }
    };

  ctl
    .command('status')
    .description('the engine condition (ok or degraded, with reasons), snapshot, zones, records, location data (GET /status)')
    .action(
      run(async (opts) => {
        const status = (await call(opts, 'GET', '/status')) as { status?: string };
        print(status);
        return status.status === 'degraded' ? CTL_EXIT.degraded : CTL_EXIT.ok;
      }),
    );

  ctl
    .command('drain')
    .description('drain every endpoint of a data center (it leaves the answers at the next query)')
    .argument('<dc>', 'data center name')
    .action(run(async (opts, dc: string) => override(opts, { dc }, 'drain')));

  ctl
    .command('undrain')
    .description('clear the override of every endpoint of a data center (the monitors decide again)')
    .argument('<dc>', 'data center name')
    .action(run(async (opts, dc: string) => override(opts, { dc }, 'none')));

  ctl
    .command('override')
    .description('force up, force down, drain or clear (none) the endpoints selected; selectors combine (all must match)')
    .addArgument(new Argument('<override>', 'what to set').choices(['up', 'down', 'drain', 'none']))
    .option('--endpoint <key>', 'one endpoint: service/dc/address')
    .option('--dc <name>', 'every endpoint of a data center')
    .option('--service <name>', 'every endpoint of a service')
    .option('--endpoints <glob>', 'endpoint keys matching a glob (service/dc/address; * stays inside one part)')
    .option('--cidr <prefix>', 'endpoints whose address is inside a prefix (192.0.2.0/24)')
    .action(
      run(async (opts, what: string, sel: { endpoint?: string; dc?: string; service?: string; endpoints?: string; cidr?: string }) => {
        const value = what === 'up' ? 'force-up' : what === 'down' ? 'force-down' : what;
        if (sel.endpoint !== undefined) {
          if (sel.dc ?? sel.service ?? sel.endpoints ?? sel.cidr) throw new CtlError('--endpoint names one endpoint: give no other selector', CTL_EXIT.refused);
          return override(opts, { endpoint: sel.endpoint }, value);
        }
        return override(opts, sel, value);
      }),
    );

  ctl
    .command('health')
    .description('health checks, endpoints, data centers, services, state file (GET /health)')
    .action(
      run(async (opts) => {
        print(await call(opts, 'GET', '/health'));
        return CTL_EXIT.ok;
      }),
    );

  ctl
    .command('reload')
    .description('re-read the configuration file; prints what changed, or why it was refused (POST /reload)')
    .action(
      run(async (opts) => {
        print(await call(opts, 'POST', '/reload', {}));
        return CTL_EXIT.ok;
      }),
    );

  ctl
    .command('what-if')
    .description('replay a query log against a hypothesis: per-DC answer shares before and after, the client networks that move (POST /what-if/replay)')
    .requiredOption('--queries <file>', "the engine's query log (JSON lines; lines other than query-log entries are skipped) or a packet capture (tcpdump -w)")
    .option('--what-if <change>', 'the hypothesis (repeatable; the forms of `ctl explain --what-if`); none replays against the running state', collect, [])
    .option('--capacity <dc=share%>', 'the most of the answers a data center may take (repeatable); those over it, before or after, are listed', collect, [])
    .option('--json', 'print the summary as JSON')
    .addHelpText('after', `\n--what-if forms:\n  ${WHAT_IF_FORMS.join('\n  ')}`)
    .action(
      run(async (opts, sel: { queries: string; whatIf: string[]; capacity: string[]; json?: boolean }) => {
        let whatIf: WhatIfRequest;
        let queries: LoggedQuery[];
        let capacity: Record<string, number>;
        try {
          whatIf = parseWhatIf(sel.whatIf);
          capacity = parseCapacities(sel.capacity);
          ({ queries } = await readQueryFile(sel.queries));
        } catch (e) {
          throw new CtlError((e as Error).message, CTL_EXIT.refused);
        }
        const summary = summariseReplay(queries, await replayOnEngine(opts, whatIf, queries), capacity);
        print(sel.json ? summary : formatReplaySummary(summary));
        return CTL_EXIT.ok;
      }),
    );

  ctl
    .command('replace')
    .description(
      'restart without losing a query: a new engine process (the build now installed) takes the sockets over, the running one hands over and exits (POST /replace)',
    )
    .action(
      run(async (opts) => {
        print(await call(opts, 'POST', '/replace', {}));
        return CTL_EXIT.ok;
      }),
    );

  addExplain(ctl.command('explain'), (cmd) => cmd.parent!.opts<CtlOptions>().admin);
  return ctl;
}

/**
 * `gslbd explain`, kept for scripts written before `ctl`: the same as `gslbd ctl explain`, with
 * its own `--admin` option.
 */
export function registerExplainAlias(program: Command): void {
  const cmd = program.command('explain').description('the same as `gslbd ctl explain`');
  cmd.option('--admin <url>', 'admin listener URL', 'http://127.0.0.1:8053');
  addExplain(cmd, (c) => c.opts<{ admin: string }>().admin);
}

/** Commander's collector of a repeatable option. */
function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** The `ctl` group's `--token-file`, when the command is under it. */
function tokenFileOf(cmd: Command): string | undefined {
  return cmd.parent?.opts<Partial<CtlOptions>>().tokenFile;
}

function addExplain(cmd: Command, adminOf: (cmd: Command) => string): void {
  cmd
    .description('how the engine answers a name for a client: the decision trace (GET /explain)')
    .argument('<name>', 'query name')
    .argument('[type]', 'query type', 'A')
    .requiredOption('-c, --client <address>', 'client address, or addr/len as an ECS source prefix')
    .option('--dnssec', 'ask with the DO bit: show what the DNSSEC signer does to the answer')
    .option('--what-if <change>', 'explain under a hypothetical change too (repeatable; see below); the live state is not touched', collect, [])
    .addHelpText(
      'after',
      `\n--what-if forms (POST /explain/what-if: the live trace, the hypothetical one, and whether the answer changes):\n  ${WHAT_IF_FORMS.join('\n  ')}`,
    )
    .action(async (name: string, type: string, opts: { client: string; dnssec?: boolean; whatIf: string[] }, self: Command) => {
      const params = new URLSearchParams({ name, type, client: opts.client });
      if (opts.dnssec) params.set('do', '1');
      try {
        if (opts.whatIf.length > 0) {
          let whatIf: WhatIfRequest;
          try {
            whatIf = parseWhatIf(opts.whatIf);
          } catch (e) {
            throw new CtlError((e as Error).message, CTL_EXIT.refused);
          }
          const body = { name, type, client: opts.client, do: opts.dnssec === true, whatIf };
          print(await call({ admin: adminOf(self), tokenFile: tokenFileOf(self) }, 'POST', '/explain/what-if', body));
          return;
        }
        print(await call({ admin: adminOf(self) }, 'GET', `/explain?${params.toString()}`));
      } catch (e) {
        if (!(e instanceof CtlError)) throw e;
        process.stderr.write(`gslbd: ${e.message}\n`);
        process.exitCode = e.code;
      }
    });
}

async function override(opts: CtlOptions, selector: Record<string, string | undefined>, value: string): Promise<number> {
  print(await call(opts, 'POST', '/health/override', { ...selector, override: value }));
  return CTL_EXIT.ok;
}

/**
 * Replays `queries` on the running engine under `whatIf` (`POST /what-if/replay`, in batches of
 * {@link MAX_REPLAY_QUERIES}): one row per query, in order.
 * @throws Error (a CtlError with its exit code) when the engine cannot be reached or refuses.
 */
export async function replayOnEngine(
  opts: CtlOptions,
  whatIf: WhatIfRequest,
  queries: readonly { readonly name: string; readonly type: string; readonly client: string }[],
): Promise<ReplayRow[]> {
  const rows: ReplayRow[] = [];
  for (let i = 0; i < queries.length; i += MAX_REPLAY_QUERIES) {
    const batch = queries.slice(i, i + MAX_REPLAY_QUERIES).map(({ name, type, client }) => ({ name, type, client }));
    rows.push(...((await call(opts, 'POST', '/what-if/replay', { whatIf, queries: batch })) as { results: ReplayRow[] }).results);
  }
  return rows;
}

/** `GET path` on the engine's admin listener; the parsed JSON answer (exit codes as {@link replayOnEngine}). */
export function getFromEngine(opts: CtlOptions, path: string): Promise<unknown> {
  return call(opts, 'GET', path);
}

/**
 * One admin API call; the parsed JSON answer.
 * @throws CtlError when the engine cannot be reached (exit 2) or answers an error (exit 1, with its message).
 */
async function call(opts: CtlOptions, method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  const headers: Record<string, string> = {};
  if (method === 'POST') {
    headers['content-type'] = 'application/json';
    const token = readToken(opts);
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
  }
  let res: Response;
  try {
    res = await fetch(new URL(path, opts.admin), { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  } catch (e) {
    throw new CtlError(`cannot reach ${opts.admin}: ${(e as Error).message}`, CTL_EXIT.unreachable);
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  if (!res.ok) {
    const error = typeof json === 'object' && json !== null && 'error' in json ? String((json as { error: unknown }).error) : text;
    const hint = res.status === 401 ? ` (give the token with --token-file, $${CTL_ENV.tokenFile} or $${CTL_ENV.token})` : '';
    throw new CtlError(`${method} ${path}: ${res.status} ${error}${hint}`, CTL_EXIT.refused);
  }
  return json;
}

/** The admin token: the file's contents without surrounding whitespace, else `$GSLBD_TOKEN`. */
function readToken(opts: CtlOptions): string | undefined {
  if (opts.tokenFile !== undefined) {
    try {
      return readFileSync(opts.tokenFile, 'utf8').trim();
    } catch (e) {
      throw new CtlError(`cannot read the token file: ${(e as Error).message}`, CTL_EXIT.refused);
    }
  }
  const fromEnv = process.env[CTL_ENV.token];
  return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv.trim();
}

function print(json: unknown): void {
  process.stdout.write(typeof json === 'string' ? json : `${JSON.stringify(json, null, 2)}\n`);
}
