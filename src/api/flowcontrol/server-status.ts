/**
 * The strategy both flow-control kinds share: their status belongs to the server (the config
 * producer writes it through `/status`), so the main resource never changes it, and `/status`
 * changes nothing else. Defaults apply on create and update.
 */
import type { KindDeclaration } from '../kind.js';
import type { KObject } from '../meta.js';

type Status = KObject & { status?: unknown };

export function serverOwnedStatus(): Pick<KindDeclaration, 'prepareForCreate' | 'prepareForUpdate' | 'subresources'> {
  return {
    prepareForCreate(obj) {
      delete (obj as Status).status;
    },
    prepareForUpdate(obj, old) {
      const status = (old as Status).status;
      if (status === undefined) delete (obj as Status).status;
      else (obj as Status).status = status;
    },
    subresources: {
      status: (submitted, stored) => ({ ...stored, status: (submitted as Status).status }),
    },
  };
}
