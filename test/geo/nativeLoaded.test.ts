import test from 'ava';
import { loadGeoAddon } from '../../src/core/lpm/nativeAddon.js';
import { openLocationDb } from '../../src/capabilities/geo/openLocationDb.js';
import { readCityImage } from './cityImage.js';

// The TypeScript fallback keeps gslbd running without a compiler, but it must never make a test
// run green silently: this fails whenever the addon built by `npm install` (binding.gyp) is not
// the one loaded — always under CI=true, and locally too (run `npm run build:native`).
test(`the native addon is loaded and answers by default${process.env.CI === 'true' ? ' (CI)' : ''}`, (t) => {
  const load = loadGeoAddon();
  t.truthy(load.addon, `native addon ${load.path} did not load: ${'error' in load ? load.error : ''}`);
  t.is(process.env.GSLBD_NATIVE_ADDON, undefined, 'GSLBD_NATIVE_ADDON must not redirect the addon in the normal test run');
  t.regex(load.path, /build\/Release\/gslbd_geo\.node$/);
  const opened = openLocationDb(readCityImage(), 'auto');
  t.is(opened.db.implementation, 'native');
  t.is(opened.fallbackReason, undefined);
});
