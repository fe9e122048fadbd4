/**
 * The objects a service-account token stands on, read from the in-memory read model (never from
 * storage per request): the ServiceAccount, and a bound or token Secret.
 */
import type { KObject } from '../../../api/meta.js';
import type { ReadModel } from '../../../store/read-model.js';

export interface ObjectLookup {
  serviceAccount(namespace: string, name: string): Readonly<KObject> | undefined;
  secret(namespace: string, name: string): Readonly<KObject> | undefined;
}

export function readModelLookup(readModel: ReadModel): ObjectLookup {
  return {
    serviceAccount: (namespace, name) => readModel.get('serviceaccounts', `${namespace}/${name}`)?.object,
    secret: (namespace, name) => readModel.get('secrets', `${namespace}/${name}`)?.object,
  };
}
