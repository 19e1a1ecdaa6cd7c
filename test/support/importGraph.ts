import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

/**
 * The import graph of `src/` and the layering rules it must keep (docs/ARCHITECTURE.md, "Layers"):
 * computed from the sources' own import and export declarations, value and type alike, so a
 * type-only import counts as much as a value import.
 *
 * A module is a top-level folder of `src/` — `core`, `pipeline`, `agent`, `admin`, `process`, `cli` — or
 * one folder of `src/capabilities/` or `src/doors/` (the files directly in `src/doors/` are the
 * doors' shared layer). Layers, lowest first: core, pipeline, capabilities and the agent process
 * (`agent`, which imports core only), the doors' shared layer, each door and the admin API, the
 * composition root, the CLI. Rules:
 * 1. a file imports only its own module or a module of a strictly lower layer (no upward import,
 *    and no import between two capabilities or two doors);
 * 2. no folder cycle: the graph of folders (every folder a node, sub-folders included) is acyclic.
 * Tests (`*.test.ts`) are not part of the graph: they may compose any modules.
 */

/** One broken rule: the importing file, what it imports, and why that is not allowed. */
export interface Violation {
  readonly from: string;
  readonly to: string;
  readonly rule: string;
}

const LAYERS: Readonly<Record<string, number>> = { core: 0, pipeline: 1, capabilities: 2, agent: 2, doors: 3, door: 4, admin: 4, process: 5, cli: 6 };

/** The module of a source path (`src/capabilities/health/checks/x.ts` → `capabilities/health`). */
export function moduleOf(path: string): string {
  const parts = path.split('/').slice(1);
  if ((parts[0] === 'capabilities' || parts[0] === 'doors') && parts.length > 2) return `${parts[0]}/${parts[1]}`;
  return parts[0]!;
}

/** The layer of a module; throws for a folder the layering does not know (add it to the table first). */
export function layerOf(module: string): number {
  const key = module.startsWith('capabilities/') ? 'capabilities' : module.startsWith('doors/') ? 'door' : module;
  const layer = LAYERS[key];
  if (layer === undefined) throw new Error(`src/${module} has no layer: add it to test/support/importGraph.ts and docs/ARCHITECTURE.md`);
  return layer;
}

const SPECIFIER = /(?:^|\n)\s*(?:import|export)\b[^;'"]*?\bfrom\s*'([^']+)'|(?:^|\n)\s*import\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g;

/** Relative module specifiers a source text imports or re-exports from, resolved to `.ts` paths beside `file`. */
export function importsOf(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = m[1] ?? m[2] ?? m[3]!;
    if (!spec.startsWith('.')) continue;
    out.push(normalize(join(dirname(file), spec)).replace(/\.js$/, '.ts'));
  }
  return out;
}

/** Every non-test `.ts` file under `root/src`, as repository-relative paths with their text. */
export function sourceFiles(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) files.set(relative(root, p), readFileSync(p, 'utf8'));
    }
  };
  walk(join(root, 'src'));
  return files;
}

/** Every broken layering rule in a set of source files (paths relative to the repository root). */
export function violations(files: ReadonlyMap<string, string>): Violation[] {
  const out: Violation[] = [];
  const folderEdges = new Map<string, Set<string>>();
  for (const [file, text] of files) {
    for (const target of importsOf(file, text)) {
      if (!target.startsWith('src/')) continue;
      const a = moduleOf(file);
      const b = moduleOf(target);
      if (a !== b) {
        const la = layerOf(a);
        const lb = layerOf(b);
        if (lb > la) out.push({ from: file, to: target, rule: `upward import: ${a} (layer ${la}) imports ${b} (layer ${lb})` });
        else if (lb === la) out.push({ from: file, to: target, rule: `sibling import: ${a} imports ${b} (same layer)` });
      }
      const fa = dirname(file);
      const fb = dirname(target);
      if (fa !== fb) {
        let set = folderEdges.get(fa);
        if (!set) folderEdges.set(fa, (set = new Set()));
        set.add(fb);
      }
    }
  }
  for (const cycle of folderCycles(folderEdges)) out.push({ from: cycle[0]!, to: cycle[1]!, rule: `folder cycle: ${cycle.join(' → ')}` });
  return out;
}

/** One cycle (as a folder path ending where it starts) per strongly connected component of more than one folder. */
function folderCycles(edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) cycles.push(pathWithin(new Set(component), edges, v));
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** A cycle through `start` inside one strongly connected component (breadth-first back to `start`). */
function pathWithin(component: ReadonlySet<string>, edges: ReadonlyMap<string, ReadonlySet<string>>, start: string): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of edges.get(v) ?? []) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let x = v; x !== start; x = previous.get(x)!) path.splice(1, 0, x);
        return [...path, start];
      }
      if (!previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}
