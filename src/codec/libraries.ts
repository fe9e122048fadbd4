/**
 * The codec libraries, each loaded the first time a body, response or watch event needs it
 * rather than with the modules that use it: a server (or an encoder thread) whose clients speak
 * only JSON never holds protobufjs (~1.1 MiB of heap), cbor-x (~0.5 MiB) or js-yaml (~0.45 MiB).
 * Their CommonJS builds are required, synchronously, so encoding and decoding stay synchronous
 * calls; every module reaches a library through this one, so only one copy of each is loaded.
 */
import { createRequire } from 'node:module';

type Protobufjs = typeof import('protobufjs');
type CborX = typeof import('cbor-x');
type JsYaml = typeof import('js-yaml');

const require = createRequire(import.meta.url);
let protobuf: Protobufjs | undefined;
let cbor: CborX | undefined;
let yaml: JsYaml | undefined;

export function protobufjs(): Protobufjs {
  return protobuf ??= require('protobufjs') as Protobufjs;
}

export function cborX(): CborX {
  return cbor ??= require('cbor-x') as CborX;
}

export function jsYaml(): JsYaml {
  return yaml ??= require('js-yaml') as JsYaml;
}
