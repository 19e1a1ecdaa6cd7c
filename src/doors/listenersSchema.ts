import { z } from 'zod';
import type { ListenerSection } from '../core/contracts/frontDoor.js';
import { restartOnly, restartSettings } from '../core/config/restartOnly.js';

/** The `listeners` shape of a list of sections: each section's schema under its name. */
export type ListenersShape<S extends readonly ListenerSection[]> = { -readonly [K in S[number] as K['name']]: K['listener'] };

/** The root keys the sections of `S` own (the `root` of the door kinds among them). */
export type DoorRootShape<S extends readonly ListenerSection[]> = Intersection<RootOf<S[number]>>;

type RootOf<K> = K extends { readonly root: infer R extends z.ZodRawShape } ? R : Record<never, never>;
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/**
 * The `listeners` section of the configuration: a strict object with one key per section, in
 * list order (which is the order `gslbd schema` shows them in). Unknown keys are errors. A
 * section's sockets open at start, so its settings need a restart, unless the section marks for
 * itself which of its fields do (`restartOnly`: the admin listener's token applies on reload).
 * @throws Error when two sections have the same name.
 */
export function listenersSchema<const S extends readonly ListenerSection[]>(sections: S): z.ZodObject<ListenersShape<S>, z.core.$strict> {
  const shape: Record<string, z.ZodType> = {};
  for (const s of sections) {
    if (s.name in shape) throw new Error(`two listeners are named "${s.name}"`);
    shape[s.name] = restartSettings(s.listener).length > 0 ? s.listener : restartOnly(s.listener, 'the listener sockets are opened at start');
  }
  return z.strictObject(shape) as unknown as z.ZodObject<ListenersShape<S>, z.core.$strict>;
}

/**
 * The top-level configuration keys the door kinds among `sections` own (their `root`), in list
 * order, for the composition root to spread into the root schema.
 * @throws Error when two sections claim the same key.
 */
export function doorRootShape<const S extends readonly ListenerSection[]>(sections: S): DoorRootShape<S> {
  const shape: Record<string, z.core.$ZodType> = {};
  for (const s of sections) {
    const root = (s as { readonly root?: z.ZodRawShape }).root;
    for (const [key, schema] of Object.entries(root ?? {})) {
      if (key in shape) throw new Error(`two listeners own the configuration key "${key}"`);
      shape[key] = schema;
    }
  }
  return shape as DoorRootShape<S>;
}
