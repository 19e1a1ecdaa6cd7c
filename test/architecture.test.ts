import test from 'ava';
import { REPO_ROOT } from './support/engineProcess.js';
import { importsOf, sourceFiles, violations } from './support/importGraph.js';

/**
 * The layering of `src/` (docs/ARCHITECTURE.md, "Layers"), computed from the sources: no import
 * goes upward or sideways between capabilities or doors, and no folder cycle exists. There is no
 * list of allowed exceptions.
 */

const files = sourceFiles(REPO_ROOT);

test('the import graph of src/ keeps the layers: no upward or sibling import, no folder cycle', (t) => {
  t.true(files.size > 100, `${files.size} source files read`);
  t.deepEqual(
    violations(files).map((v) => `${v.from} → ${v.to}: ${v.rule}`),
    [],
  );
});

test('an upward import in a fixture is found, type-only imports and re-exports included', (t) => {
  const fixture = new Map(files);
  fixture.set('src/core/upward.ts', "import type { Engine } from '../pipeline/engine.js';\nexport type { Stage } from '../pipeline/selection/stage.js';\n");
  t.deepEqual(
    violations(fixture).map((v) => `${v.from} → ${v.to}: ${v.rule}`),
    [
      'src/core/upward.ts → src/pipeline/engine.ts: upward import: core (layer 0) imports pipeline (layer 1)',
      'src/core/upward.ts → src/pipeline/selection/stage.ts: upward import: core (layer 0) imports pipeline (layer 1)',
    ],
  );
});

test('a capability importing another capability is found', (t) => {
  const fixture = new Map(files);
  fixture.set('src/capabilities/proximity/sideways.ts', "import { healthCapability } from '../health/capability.js';\nvoid healthCapability;\n");
  t.deepEqual(
    violations(fixture).map((v) => v.rule),
    ['sibling import: capabilities/proximity imports capabilities/health (same layer)'],
  );
});

test('a folder cycle inside a module is found', (t) => {
  const fixture = new Map(files);
  fixture.set('src/capabilities/health/checks/backToParent.ts', "import { healthCapability } from '../capability.js';\nvoid healthCapability;\n");
  const rules = violations(fixture).map((v) => v.rule);
  t.is(rules.length, 1);
  t.regex(rules[0]!, /^folder cycle: src\/capabilities\/health(\/checks)? → src\/capabilities\/health(\/checks)? → src\/capabilities\/health(\/checks)?$/);
});

test('multi-line imports, side-effect imports and dynamic imports are read', (t) => {
  const text = "import {\n  a,\n  type B,\n} from './a.js';\nimport './side.js';\nconst m = await import('../x/y.js');\nexport * from './z.js';\n";
  t.deepEqual(importsOf('src/core/f.ts', text), ['src/core/a.ts', 'src/core/side.ts', 'src/x/y.ts', 'src/core/z.ts']);
});

test('the agent process (src/agent/) imports core only: never a capability, the pipeline or the process', (t) => {
  const outside = [...files]
    .filter(([file]) => file.startsWith('src/agent/'))
    .flatMap(([file, text]) => importsOf(file, text).map((to) => [file, to] as const))
    .filter(([, to]) => to.startsWith('src/') && !to.startsWith('src/agent/') && !to.startsWith('src/core/'));
  t.deepEqual(outside, []);
});
