/**
 * How the encoder pool hands back a batch of protobuf envelopes: one buffer, transferred rather
 * than copied: [count: u32][end offset of each envelope: u32 × count][envelopes back to back].
 */

export function packEnvelopes(envelopes: readonly Uint8Array[]): ArrayBuffer {
  const header = 4 * (1 + envelopes.length);
  let total = 0;
  for (const e of envelopes) total += e.length;
  const out = new Uint8Array(header + total);
  const view = new DataView(out.buffer);
  view.setUint32(0, envelopes.length);
  let at = 0;
  envelopes.forEach((e, i) => {
    out.set(e, header + at);
    at += e.length;
    view.setUint32(4 * (1 + i), at);
  });
  return out.buffer;
}

/** The envelopes of a packed batch, as views into its buffer. */
export function unpackEnvelopes(buffer: ArrayBuffer): Uint8Array[] {
  const view = new DataView(buffer);
  const count = view.getUint32(0);
  const header = 4 * (1 + count);
  const out: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < count; i++) {
    const end = view.getUint32(4 * (1 + i));
    out.push(new Uint8Array(buffer, header + start, end - start));
    start = end;
  }
  return out;
}
