import { parentPort, workerData } from 'node:worker_threads';
import { lowerThreadPriority } from '../../core/threads/backgroundPriority.js';
import type { GeoConfig } from './geoSchema.js';
import { loadLocationImage } from './loadSources.js';

/**
 * Worker-thread entry of `loadLocationImageOffThread`: builds the compiled image and transfers
 * its buffer back to the engine thread.
 */
lowerThreadPriority();
const { geo, configFile } = workerData as { geo: GeoConfig; configFile: string };
try {
  const image = loadLocationImage(geo, configFile);
  parentPort!.postMessage({ ok: true, image }, [image.bytes.buffer as ArrayBuffer]);
} catch (e) {
  parentPort!.postMessage({ ok: false, error: (e as Error).message });
}
