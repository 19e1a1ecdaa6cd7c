import { dirname, resolve as resolvePath } from 'node:path';
import type { ConfigProblem } from '../../core/config/load.js';
import { FILE_SIZE_LIMITS, readRegularFile, referencedFileProblem } from '../../core/config/regularFile.js';
import type { CheckFiles, MonitorBase } from './checks/checkKind.js';
import { kindOf, type CheckKindList } from './checks/registry.js';

/** A file a monitor names: the monitor's position in `health.monitors`, the field, the path as written. */
export interface MonitorFile {
  readonly index: number;
  readonly monitor: MonitorBase;
  readonly field: string;
  readonly path: string;
}

/**
 * The files the monitors name (the `files` fields of their kinds in `kinds`, when set), in
 * monitor order; paths as written (relative to the configuration file).
 */
export function monitorFiles(monitors: readonly MonitorBase[], kinds: CheckKindList): MonitorFile[] {
  const found: MonitorFile[] = [];
  monitors.forEach((monitor, index) => {
    for (const field of kindOf(monitor, kinds).files ?? []) {
      const path = (monitor as unknown as Record<string, unknown>)[field];
      if (typeof path === 'string') found.push({ index, monitor, field, path });
    }
  });
  return found;
}

/**
 * Reads the files the monitors name, relative to `baseDir`: monitor name → its files by field.
 * @throws Error naming the field (`health.monitors[1].caFile: cannot read "ca.pem": …`) for the
 *   first file that cannot be read.
 */
export function readMonitorFiles(monitors: readonly MonitorBase[], baseDir: string, kinds: CheckKindList): Map<string, CheckFiles> {
  const read = new Map<string, Record<string, Buffer>>();
  for (const { index, monitor, field, path } of monitorFiles(monitors, kinds)) {
    let bytes: Buffer;
    try {
      bytes = readRegularFile(resolvePath(baseDir, path), FILE_SIZE_LIMITS.monitor);
    } catch (e) {
      throw new Error(`health.monitors[${index}].${field}: cannot read "${path}": ${(e as Error).message}`);
    }
    let files = read.get(monitor.name);
    if (!files) read.set(monitor.name, (files = {}));
    files[field] = bytes;
  }
  return read;
}

/**
 * The files the monitors name (their kinds' `files`, relative to `configFile`'s folder) that are
 * missing or not regular files, each a problem with its key (`health.monitors[1].caFile`): what
 * `check-config` and start-up report before anything loads, for every kind of `kinds`.
 */
export function monitorFileProblems(monitors: readonly MonitorBase[], configFile: string, kinds: CheckKindList): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const { index, field, path } of monitorFiles(monitors, kinds)) {
    const problem = referencedFileProblem(path, resolvePath(dirname(configFile), path), FILE_SIZE_LIMITS.monitor);
    if (problem !== undefined) problems.push({ path: `health.monitors[${index}].${field}`, message: problem });
  }
  return problems;
}
