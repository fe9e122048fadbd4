/**
 * Removes what tsc left in dist/ for TypeScript sources that no longer exist (a deleted test or
 * bench scenario would otherwise still run), and nothing else. The build is incremental and never
 * deletes dist/ as a whole: a server running from this checkout keeps its files.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

/** the folders tsconfig.json compiles; dist/ mirrors them (rootDir ".") */
const compiled = ['src', 'workers', 'test', 'bench'];
/** what tsc writes for one source file `x.ts` */
const outputSuffixes = ['.js.map', '.js', '.d.ts.map', '.d.ts'];

function sourceOf(root, output) {
  const suffix = outputSuffixes.find((s) => output.endsWith(s));
  return suffix === undefined ? undefined : join(root, relative(join(root, 'dist'), output.slice(0, -suffix.length) + '.ts'));
}

function prune(root, dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      prune(root, path);
      if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
      continue;
    }
    const source = sourceOf(root, path);
    if (source !== undefined && !existsSync(source)) rmSync(path);
  }
}

/** `root`: the checkout (where tsconfig.json and dist/ are) */
export function pruneDist(root) {
  for (const folder of compiled) prune(root, join(root, 'dist', folder));
}
