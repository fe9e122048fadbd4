/**
 * ValidateOwnerReferences and the garbage collector's finalizer rule from
 * k8s.io/apimachinery/pkg/api/validation (objectmeta.go), with their field paths and wording:
 * the errors of one reference name `metadata.ownerReferences.<field>`, not an index.
 */
import { fieldErrors, type FieldError } from '../../status/status-error.js';
import { foregroundFinalizer, orphanFinalizer } from '../deletion-policy.js';
import type { OwnerReference } from '../meta.js';

/** Kinds that may never own anything: the core v1 Event (BannedOwners). */
const bannedOwners: ReadonlySet<string> = new Set(['/v1, Kind=Event']);

/** schema.ParseGroupVersion: `v1` is the core group; more than one `/` parses to nothing. */
function parseGroupVersion(apiVersion: string): { group: string; version: string } {
  if (apiVersion === '' || apiVersion === '/') return { group: '', version: '' };
  const parts = apiVersion.split('/');
  if (parts.length === 1) return { group: '', version: apiVersion };
  if (parts.length === 2) return { group: parts[0], version: parts[1] };
  return { group: '', version: '' };
}

/** The reference as its JSON serializes it, fields in declaration order, for error values. */
function shown(ref: OwnerReference): Record<string, unknown> {
  const out: Record<string, unknown> = { apiVersion: ref.apiVersion ?? '', kind: ref.kind ?? '', name: ref.name ?? '', uid: ref.uid ?? '' };
  if (ref.controller !== undefined) out.controller = ref.controller;
  if (ref.blockOwnerDeletion !== undefined) out.blockOwnerDeletion = ref.blockOwnerDeletion;
  return out;
}

function validateOwnerReference(ref: OwnerReference, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const gv = parseGroupVersion(ref.apiVersion ?? '');
  if (!gv.version) errs.push(fieldErrors.invalid(`${path}.apiVersion`, ref.apiVersion ?? '', 'version must not be empty'));
  if (!ref.kind) errs.push(fieldErrors.invalid(`${path}.kind`, ref.kind ?? '', 'kind must not be empty'));
  if (!ref.name) errs.push(fieldErrors.invalid(`${path}.name`, ref.name ?? '', 'name must not be empty'));
  if (!ref.uid) errs.push(fieldErrors.invalid(`${path}.uid`, ref.uid ?? '', 'uid must not be empty'));
  const gvk = `${gv.group}/${gv.version}, Kind=${ref.kind ?? ''}`;
  if (bannedOwners.has(gvk)) errs.push(fieldErrors.invalid(path, shown(ref), `${gvk} is disallowed from being an owner`));
  return errs;
}

/** Every reference complete, and at most one of them the controller. */
export function validateOwnerReferences(refs: readonly OwnerReference[], path = 'metadata.ownerReferences'): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  for (const ref of refs) {
    errs.push(...validateOwnerReference(ref, path));
    if (ref.controller !== true) continue;
    const controller = `${ref.kind ?? ''}/${ref.name ?? ''}`;
    if (!firstController) {
      firstController = controller;
    } else {
      errs.push(fieldErrors.invalid(path, refs.map(shown),
        `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${controller}`));
    }
  }
  return errs;
}

/** The two propagation finalizers contradict each other. */
export function validatePropagationFinalizers(finalizers: readonly string[], path = 'metadata.finalizers'): FieldError[] {
  if (!finalizers.includes(orphanFinalizer) || !finalizers.includes(foregroundFinalizer)) return [];
  return [fieldErrors.invalid(path, [...finalizers], `finalizer ${orphanFinalizer} and ${foregroundFinalizer} cannot be both set`)];
}
