/** The kinds this server serves from the start, each declared once under src/api/<group>/ (the CRD kind under src/apiextensions/). */
import { crdKind } from '../../apiextensions/crd-kind.js';
import type { KindDeclaration } from '../kind.js';
import { builtinKindsWithoutCrds } from './builtin-without-crds.js';

export const builtinKinds: readonly KindDeclaration[] = [...builtinKindsWithoutCrds, crdKind];
