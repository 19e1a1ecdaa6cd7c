import type { DelegationHop } from '../model/query.js';

/**
 * The delegation hop option: an EDNS option (RFC 6891 §6.1.2) that an engine adds to the queries it
 * sends to a sub-tier's name servers when it resolves a delegated proximity zone itself (recursive
 * delegation, docs/PRODUCT.md §5), so that two engines delegating to each other cannot loop: it
 * carries the id of the engine that first delegated the query and how many engines have delegated
 * it so far. Its code is from the private-use range 65001–65534 (RFC 6891 §9): it only ever
 * travels between engines of one deployment, and the engine never echoes it to clients.
 *
 * Wire form: one octet hop count, then the origin engine's id (8 octets).
 */
export const DELEGATION_HOP_OPTION_CODE = 65_430;

/** Octets of an engine id in the option. */
export const ENGINE_ID_OCTETS = 8;

/** The option's payload, undefined when it is not {@link ENGINE_ID_OCTETS} + 1 octets (an option of another deployment's engines: ignored). */
export function parseDelegationHop(data: Buffer): DelegationHop | undefined {
  if (data.length !== ENGINE_ID_OCTETS + 1) return undefined;
  return { origin: data.toString('hex', 1), hops: data[0]! };
}

/** The option's payload for `hop` (`origin` is hex of {@link ENGINE_ID_OCTETS} octets). */
export function encodeDelegationHop(hop: DelegationHop): Buffer {
  const out = Buffer.alloc(ENGINE_ID_OCTETS + 1);
  out[0] = Math.min(hop.hops, 255);
  Buffer.from(hop.origin, 'hex').copy(out, 1, 0, ENGINE_ID_OCTETS);
  return out;
}
