import { createHash } from 'node:crypto';

/**
 * The `r` nodes that run the check `checkId`, by rendezvous (highest random weight) hashing
 * (Thaler & Ravishankar, "Using name-based mappings to increase hit rates", 1998): every node
 * scores SHA-256(`node` NUL `checkId`) and the `r` highest scores win. Every node computes the same
 * owners from the same live node list, with nothing exchanged; a node that joins takes over only
 * the checks where it scores among the top `r` (about r/n of them, one owner each), and a node
 * that leaves hands each of its checks to the next-highest node alone — no other check moves.
 * @returns the owners, highest score first (all of `nodes` when there are at most `r`).
 */
export function rendezvousOwners(checkId: string, nodes: readonly string[], r: number): string[] {
  if (nodes.length <= r) return [...nodes].sort();
  return nodes
    .map((node) => ({ node, score: score(node, checkId) }))
    .sort((a, b) => b.score - a.score || (a.node < b.node ? -1 : 1))
    .slice(0, r)
    .map((s) => s.node);
}

/** The first 48 bits of SHA-256(node NUL check) as a number (exact in a double). */
function score(node: string, checkId: string): number {
  return createHash('sha256').update(`${node}\u0000${checkId}`).digest().readUIntBE(0, 6);
}
