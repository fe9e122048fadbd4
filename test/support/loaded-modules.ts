/**
 * Which modules this process has loaded, for tests that check a library is loaded on first use
 * only: ES modules as a resolve hook reports them (modules imported after `watchModuleLoads`),
 * CommonJS ones from require's cache.
 */
import { createRequire, register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

export interface ModuleLoads {
  /** every ES module URL resolved since the watch began */
  readonly resolved: readonly string[];
  /** whether any module whose path contains `fragment` has been loaded, either way */
  loaded(fragment: string): Promise<boolean>;
}

export function watchModuleLoads(): ModuleLoads {
  const { port1, port2 } = new MessageChannel();
  const resolved: string[] = [];
  port1.on('message', (url: string) => resolved.push(url));
  port1.unref();
  const hook = 'let port; export function initialize(data) { port = data.port; } export async function resolve(specifier, context, next) { const r = await next(specifier, context); port.postMessage(r.url); return r; }';
  register(`data:text/javascript,${encodeURIComponent(hook)}`, { data: { port: port2 }, transferList: [port2] });
  return {
    resolved,
    async loaded(fragment) {
      await new Promise((r) => setTimeout(r, 50)); // the hook's messages arrive asynchronously
      return [...resolved, ...Object.keys(createRequire(import.meta.url).cache)].some((file) => file.includes(fragment));
    },
  };
}
