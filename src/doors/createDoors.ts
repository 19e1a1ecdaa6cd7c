import type { FrontDoor, FrontDoorHost, FrontDoorKind, ListenerSection } from '../core/contracts/frontDoor.js';

/** True for the sections of a listener list that are front-door kinds (the admin listener is not). */
export function isFrontDoorKind<C, H extends FrontDoorHost>(s: ListenerSection | FrontDoorKind<C, H>): s is FrontDoorKind<C, H> {
  return typeof (s as Partial<FrontDoorKind<C, H>>).create === 'function';
}

/**
 * The front doors `config` asks for, created by their kinds in list order and keyed by name;
 * none listens yet (the composition root starts them, in this order, once the first snapshot
 * is published). Sections that are not door kinds are skipped.
 */
export function createDoors<C, H extends FrontDoorHost>(
  sections: readonly (ListenerSection | FrontDoorKind<C, H>)[],
  config: C,
  host: H,
): Map<string, FrontDoor> {
  const doors = new Map<string, FrontDoor>();
  for (const s of sections) {
    if (!isFrontDoorKind(s)) continue;
    const door = s.create(config, host);
    if (door) doors.set(s.name, door);
  }
  return doors;
}
