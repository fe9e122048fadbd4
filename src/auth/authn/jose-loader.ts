/**
 * jose, loaded on first use: a server that never sees a JWT does not pay for the import at
 * start (start-to-ready is budgeted), and the first token pays it once.
 */
let module: Promise<typeof import('jose')> | undefined;

export function loadJose(): Promise<typeof import('jose')> {
  module ??= import('jose');
  return module;
}
