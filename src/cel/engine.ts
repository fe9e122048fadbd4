/**
 * The CEL engine, @bufbuild/cel, loaded the first time an expression is compiled or a CEL value
 * is looked at. With what it brings (protobuf-es, RE2) it is ~4.4 MiB of heap, which a server
 * whose configuration and CRDs hold no CEL never needs. Its CommonJS build is required,
 * synchronously, so that the hooks compiling rules (CRD validation, a custom resource kind's
 * declaration) stay synchronous; every module reaches the library through this one, so only one
 * copy of it is ever loaded.
 */
import { createRequire } from 'node:module';

type CelLibrary = typeof import('@bufbuild/cel');
type CelExtensions = typeof import('@bufbuild/cel/ext');

const require = createRequire(import.meta.url);
let library: CelLibrary | undefined;
let extensions: CelExtensions | undefined;

export function cel(): CelLibrary {
  return library ??= require('@bufbuild/cel') as CelLibrary;
}

/** The library's extensions (the strings extension Kubernetes' environments include). */
export function celExtensions(): CelExtensions {
  return extensions ??= require('@bufbuild/cel/ext') as CelExtensions;
}
