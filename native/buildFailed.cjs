// Runs when `node-gyp rebuild` fails during `npm install` (no compiler, no Node headers): the
// install still succeeds and gslbd falls back to the TypeScript location lookup, warning at
// start-up and in /healthz. Under CI=true the test suite fails instead (test/geo/nativeLoaded).
process.stderr.write(
  '\n*** gslbd: the native location addon (native/, binding.gyp) did not build.\n' +
    '*** gslbd will use the slower TypeScript location lookup and warn about it at start-up.\n' +
    '*** Install g++, make and python3, then run `npm run build:native`.\n\n',
);
