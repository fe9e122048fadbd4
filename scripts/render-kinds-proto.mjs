#!/usr/bin/env node
/** Rewrites src/codec/proto/kinds.proto from the built-in kinds' declarations (run after a build). */
import { writeFileSync } from 'node:fs';
import { builtinProtoSchemas } from '../dist/src/codec/proto/builtin-schemas.js';
import { renderKindsProto } from '../dist/src/codec/proto/render.js';

writeFileSync(new URL('../src/codec/proto/kinds.proto', import.meta.url), renderKindsProto(builtinProtoSchemas()));
