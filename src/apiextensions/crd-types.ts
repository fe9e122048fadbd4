/** The CustomResourceDefinition object (apiextensions.orch.io/v1) as stored, in its JSON shape. */
import type { KObject } from '../api/meta.js';

export interface CrdNames {
  plural: string;
  singular?: string;
  shortNames?: string[];
  kind: string;
  listKind?: string;
  categories?: string[];
}

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: unknown };
  subresources?: { status?: Record<string, never>; scale?: ScaleSubresource };
  additionalPrinterColumns?: PrinterColumn[];
  selectableFields?: { jsonPath: string }[];
}

export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  caBundle?: string;
}

export interface CrdConversion {
  strategy: 'None' | 'Webhook';
  webhook?: { clientConfig?: WebhookClientConfig; conversionReviewVersions: string[] };
}

export interface CrdCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CrdSpec {
  group: string;
  names: CrdNames;
  scope: 'Namespaced' | 'Cluster';
  versions: CrdVersion[];
  conversion?: CrdConversion;
  preserveUnknownFields?: boolean;
}

export interface CrdStatus {
  conditions?: CrdCondition[];
  acceptedNames?: CrdNames;
  storedVersions?: string[];
}

export interface CrdObject extends KObject {
  spec: CrdSpec;
  status?: CrdStatus;
}

/** The finalizer that deletes every custom resource before its definition goes. */
export const cleanupFinalizer = 'customresourcecleanup.apiextensions.orch.io';

export const crdGroup = 'apiextensions.orch.io';
export const crdTable = `customresourcedefinitions.${crdGroup}`;
