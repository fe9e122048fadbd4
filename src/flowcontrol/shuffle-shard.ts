/**
 * Shuffle sharding (k8s.io/apiserver/pkg/util/shufflesharding): a flow's 64-bit hash deals it a
 * hand of distinct queues from the level's deck, so two flows rarely share their whole hand and a
 * heavy flow crowds out only the few flows that share all its queues.
 */

const fnvOffset = 0xcbf29ce484222325n;
const fnvPrime = 0x100000001b3n;
const mask64 = 0xffffffffffffffffn;

/** FNV-1a, 64 bits, over the UTF-8 bytes of the flow schema's name and the distinguisher (as Kubernetes hashes a flow). */
export function flowHash(flowSchema: string, distinguisher: string): bigint {
  let h = fnvOffset;
  for (const part of [flowSchema, distinguisher]) {
    for (const byte of Buffer.from(part, 'utf8')) {
      h ^= BigInt(byte);
      h = (h * fnvPrime) & mask64;
    }
  }
  return h;
}

/**
 * Dealer.Deal: the hand of `handSize` distinct cards (queue indexes) from a deck of `deckSize`
 * the hash value picks, each card's remainder taking the place left by the cards before it.
 */
export function deal(hash: bigint, deckSize: number, handSize: number): number[] {
  const remainders: number[] = [];
  let value = hash;
  for (let i = 0; i < handSize; i++) {
    const size = BigInt(deckSize - i);
    const next = value / size;
    remainders.push(Number(value - size * next));
    value = next;
  }
  const hand: number[] = [];
  for (let i = 0; i < handSize; i++) {
    let card = remainders[i];
    for (let j = i; j > 0; j--) if (card >= remainders[j - 1]) card++;
    hand.push(card);
  }
  return hand;
}
