/** The wire encodings this server speaks, and their media types. */
export type Encoding = 'json' | 'yaml';

export const encodings: ReadonlyArray<{ mediaType: string; encoding: Encoding }> = [
  { mediaType: 'application/json', encoding: 'json' },
  { mediaType: 'application/yaml', encoding: 'yaml' },
];
