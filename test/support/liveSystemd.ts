import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './engineProcess.js';

const run = promisify(execFile);

/** The programs a live systemd needs here; each is checked before anything starts. */
const SYSTEMD = '/lib/systemd/systemd';
const TOOLS = [SYSTEMD, '/usr/bin/unshare', '/usr/bin/nsenter', '/usr/bin/systemctl'];

/** What {@link startLiveSystemd} is given. */
export interface LiveSystemdOptions {
  /**
   * Unit files by name (`gslbd.service`, `gslbd.service.d/test.conf`), written to
   * `/run/systemd/system` inside; given {@link LiveSystemd.dir}, e.g. for `StandardOutput=append:`.
   */
  readonly units: (dir: string) => Readonly<Record<string, string>>;
  /** The target systemd starts (`--unit=`), one of {@link units}; nothing else is started. */
  readonly target: string;
  /** Files by absolute path inside the namespace (e.g. `/etc/gslbd/gslbd.yaml`), written before systemd starts. */
  readonly files: Readonly<Record<string, { readonly text: string; readonly mode: number; readonly group?: string }>>;
  /** A system user and group made inside the namespace only (in an overlay over `/etc`), e.g. `gslbd`. */
  readonly user?: string;
  /** Units masked inside (`/dev/null` links), e.g. `network-online.target`. */
  readonly masked?: readonly string[];
}

/** A systemd running as PID 1 of its own PID and mount namespaces. */
export interface LiveSystemd {
  /** A directory on the host for this run (unit logs: `StandardOutput=append:` a file in it). */
  readonly dir: string;
  /** PID 1 of the namespace as the host sees it. */
  readonly hostPid: number;
  /** `systemctl ARGS` inside (the namespace's private bus socket); stdout, trimmed. @throws Error when systemctl exits non-zero. */
  systemctl(...args: string[]): Promise<string>;
  /** A command inside the namespaces (`nsenter -m -p`), e.g. `kill -9 PID` with the pid as seen inside; stdout. @throws Error when it exits non-zero. */
  inside(...command: string[]): Promise<string>;
  /** `systemctl show -p NAME unit` for each name: `{ NAME: value }`. */
  show(unit: string, ...names: string[]): Promise<Record<string, string>>;
  /** Whether a process with this pid (as the namespace sees it) exists inside. */
  running(pid: number): boolean;
  /** A file inside the namespace, by its path inside (through `/proc/<pid>/root`). */
  pathInside(path: string): string;
  /** systemd's own log (its console, a file here). */
  console(): string;
  /** Kills the namespace (SIGKILL to its PID 1 kills every process in it), removes the cgroups and the directory. */
  stop(): Promise<void>;
}

/**
 * Boots systemd (`systemd --system --unit=TARGET`) as PID 1 of a new PID and mount namespace
 * (`unshare --pid --fork --mount --mount-proc`), sharing the host's network namespace, with only
 * the units given: inside, tmpfs over `/run`, `/etc/systemd/system` (the host's enabled units are
 * not seen), `/var/lib` and `/opt`; an overlay over `/etc` (upper layer on the tmpfs) so the unit's
 * user, group and files exist inside only; this checkout bind-mounted at `/opt/gslbd` (the example
 * units' path); `/dev/console` a file here (systemd's log). Its cgroups are a new child of the
 * caller's cgroup in each systemd hierarchy (name=systemd and unified), removed by `stop()`.
 * Resolves once `systemctl` answers inside.
 *
 * Needs root. @throws Error when a program is missing, the caller is not root, or systemd does not
 * answer within 30 s (the namespace is killed first).
 */
export async function startLiveSystemd(opts: LiveSystemdOptions): Promise<LiveSystemd> {
  const missing = TOOLS.filter((p) => !existsSync(p));
  if (missing.length > 0) throw new Error(`a live systemd needs ${missing.join(', ')} (apt-get install systemd util-linux)`);
  if (process.getuid?.() !== 0) throw new Error('a live systemd in its own PID namespace needs root');
  const dir = mkdtempSync(join(tmpdir(), 'gslbd-live-systemd-'));
  const unitsDir = join(dir, 'units');
  for (const [name, text] of Object.entries(opts.units(dir))) {
    mkdirSync(join(unitsDir, name, '..'), { recursive: true });
    writeFileSync(join(unitsDir, name), text);
  }
  const filesDir = join(dir, 'files');
  const placeFiles: string[] = [];
  Object.entries(opts.files).forEach(([path, f], i) => {
    mkdirSync(filesDir, { recursive: true });
    writeFileSync(join(filesDir, String(i)), f.text);
    placeFiles.push(`mkdir -p "$(dirname '${path}')"`, `install -m ${f.mode.toString(8)} ${f.group ? `-g ${f.group}` : ''} "$D/files/${i}" '${path}'`);
  });
  writeFileSync(join(dir, 'console.log'), '');
  const cgroups = unifiedCgroupDirs().map((parent) => join(parent, `gslbd-live-systemd-${process.pid}-${Date.now()}`));
  for (const c of cgroups) mkdirSync(c);
  const user = opts.user
    ? [`echo '${opts.user}:x:990:990:${opts.user}:/nonexistent:/usr/sbin/nologin' >> /etc/passwd`, `echo '${opts.user}:x:990:' >> /etc/group`]
    : [];
  // Runs as PID 1 of the new namespaces until it execs systemd; mounts made here are private
  // (--make-rprivate), the host's view is never changed.
  const boot = [
    'set -e',
    'D="$1"',
    'mount --make-rprivate /',
    ...cgroups.map((c) => `echo 0 > '${c}/cgroup.procs'`),
    // The unified hierarchy alone at /sys/fs/cgroup, as Debian 12 boots (hybrid hosts: its v2 part).
    'mount -t cgroup2 cgroup2 /sys/fs/cgroup',
    'mount -t tmpfs -o mode=0755 tmpfs /run',
    'mkdir /run/etc-upper /run/etc-work',
    'mount -t overlay overlay -o lowerdir=/etc,upperdir=/run/etc-upper,workdir=/run/etc-work /etc',
    'mount -t tmpfs -o mode=0755 tmpfs /etc/systemd/system',
    'mount -t tmpfs -o mode=0755 tmpfs /var/lib',
    'mount -t tmpfs -o mode=0755 tmpfs /opt',
    'mkdir /opt/gslbd',
    `mount --bind '${REPO_ROOT}' /opt/gslbd`,
    '[ -e /dev/console ] && mount --bind "$D/console.log" /dev/console',
    ...user,
    ...placeFiles,
    'mkdir -p /run/systemd/system',
    'cp -r "$D/units/." /run/systemd/system/',
    ...(opts.masked ?? []).map((u) => `ln -s /dev/null '/run/systemd/system/${u}'`),
    `exec ${SYSTEMD} --system --unit='${opts.target}' --log-target=console --log-level=info`,
  ].join('\n');
  const unshare: ChildProcess = spawn('unshare', ['--pid', '--fork', '--mount', '--mount-proc', 'bash', '-c', boot, 'boot', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let bootOut = '';
  unshare.stdout!.on('data', (c: Buffer) => (bootOut += c.toString()));
  unshare.stderr!.on('data', (c: Buffer) => (bootOut += c.toString()));
  let hostPid = 0;
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (hostPid > 0) {
      try {
        process.kill(hostPid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (unshare.exitCode === null && unshare.signalCode === null) {
      await new Promise<void>((resolve) => {
        unshare.once('exit', () => resolve());
        // unshare may still be waiting for its child's fork; it dies with its child
        setTimeout(() => {
          unshare.kill('SIGKILL');
          resolve();
        }, 5000);
      });
    }
    // The namespace's processes are gone once PID 1 is reaped; the kernel frees cgroups a moment later.
    for (let i = 0; i < 100 && cgroups.some(existsSync); i++) {
      for (const c of cgroups) removeCgroupTree(c);
      if (cgroups.some(existsSync)) await new Promise((r) => setTimeout(r, 50));
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 200 && hostPid === 0 && unshare.exitCode === null; i++) {
      const children = readFileSafe(`/proc/${unshare.pid}/task/${unshare.pid}/children`).trim();
      if (children) hostPid = Number(children.split(' ')[0]);
      else await new Promise((r) => setTimeout(r, 25));
    }
    if (hostPid === 0) throw new Error(`unshare did not start PID 1:\n${bootOut}`);
    const inside = async (...command: string[]): Promise<string> =>
      (await run('nsenter', ['-t', String(hostPid), '-m', '-p', ...command], { timeout: 30000 })).stdout.trim();
    const systemctl = (...args: string[]): Promise<string> => inside('systemctl', '--no-pager', ...args);
    let lastError = '';
    for (let i = 0; i < 300; i++) {
      try {
        await systemctl('is-system-running');
        lastError = '';
        break;
      } catch (e) {
        const out = (e as { stdout?: string }).stdout?.trim() ?? '';
        // is-system-running exits non-zero for `starting`/`degraded`: systemd answered.
        if (/^(initializing|starting|running|degraded|maintenance|stopping)$/.test(out)) {
          lastError = '';
          break;
        }
        lastError = `${(e as Error).message} ${out}`;
        if (unshare.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    if (lastError) throw new Error(`systemd did not answer: ${lastError}\n${bootOut}\n${readFileSafe(join(dir, 'console.log'))}`);
    return {
      dir,
      hostPid,
      systemctl,
      inside,
      async show(unit, ...names) {
        const out = await systemctl('show', unit, ...names.flatMap((n) => ['-p', n]));
        return Object.fromEntries(out.split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
      },
      running: (pid) => existsSync(`/proc/${hostPid}/root/proc/${pid}`),
      pathInside: (path) => `/proc/${hostPid}/root${path}`,
      console: () => readFileSafe(join(dir, 'console.log')),
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * The caller's cgroup in the unified (v2) hierarchy, as a one-element list (empty without one):
 * `/sys/fs/cgroup/unified/...` on a hybrid host, `/sys/fs/cgroup/...` on a unified one.
 */
function unifiedCgroupDirs(): string[] {
  const line = readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('0::'));
  if (!line) return [];
  const dir = join(existsSync('/sys/fs/cgroup/unified/cgroup.procs') ? '/sys/fs/cgroup/unified' : '/sys/fs/cgroup', line.slice(3));
  return existsSync(dir) ? [dir] : [];
}

/** rmdir of a cgroup and the cgroups under it, deepest first; cgroups still busy stay (retried by the caller). */
function removeCgroupTree(path: string): void {
  if (!existsSync(path)) return;
  for (const name of readdirSync(path)) {
    const child = join(path, name);
    try {
      if (statSync(child).isDirectory()) removeCgroupTree(child);
    } catch {
      // vanished meanwhile
    }
  }
  try {
    rmdirSync(path);
  } catch {
    // still has processes for a moment
  }
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
