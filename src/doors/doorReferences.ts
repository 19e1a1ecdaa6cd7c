import type { z } from 'zod';
import type { DoorFileReference, ListenerSection } from '../core/contracts/frontDoor.js';

/** The optional parts of a door kind this file composes; the admin listener's section has neither. */
interface ReferencingSection extends ListenerSection {
  check?(config: never, ctx: z.RefinementCtx): void;
  files?(config: never): readonly DoorFileReference[];
}

/**
 * Runs the cross-reference checks of every door kind among `sections` (`FrontDoorKind.check`), in
 * list order, on the whole validated configuration: the composition root adds this to the root
 * schema, so start-up, `check-config` and reloads report a door's problems with their paths.
 */
export function checkDoorReferences(sections: readonly ListenerSection[], config: unknown, ctx: z.RefinementCtx): void {
  for (const s of sections as readonly ReferencingSection[]) s.check?.(config as never, ctx);
}

/** The files the door kinds among `sections` read for `config` (`FrontDoorKind.files`), in list order. */
export function doorFileReferences(sections: readonly ListenerSection[], config: unknown): DoorFileReference[] {
  return (sections as readonly ReferencingSection[]).flatMap((s) => s.files?.(config as never) ?? []);
}
