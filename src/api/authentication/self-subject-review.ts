/**
 * SelfSubjectReview (`authentication.orch.io/v1`): who the server thinks the caller is, after
 * impersonation; `kubectl auth whoami` asks for it. Answered, never stored.
 */
import { errors } from '../../status/status-error.js';
import type { KindDeclaration } from '../kind.js';
import { typeAndMeta } from '../meta.js';
import { formatTime, s } from '../schema.js';
import { authenticationGroup, unstoredKindBehaviour } from './group.js';
import { userInfoBody, userInfoSchema } from './user-info.js';

const selfSubjectReviewStatusSchema = s.struct('SelfSubjectReviewStatus', {
  userInfo: userInfoSchema,
}, 'SelfSubjectReviewStatus is filled by the kube-apiserver and sent back to a user.');
selfSubjectReviewStatusSchema.proto = { userInfo: 1 };

export const selfSubjectReviewKind: KindDeclaration = {
  group: authenticationGroup, version: 'v1', kind: 'SelfSubjectReview', listKind: 'SelfSubjectReviewList',
  resource: 'selfsubjectreviews', singular: 'selfsubjectreview', shortNames: [], namespaced: false,
  verbs: ['create'],
  schema: s.struct('SelfSubjectReview', typeAndMeta({
    status: selfSubjectReviewStatusSchema,
  }), 'SelfSubjectReview contains the user information that the kube-apiserver has about the user making this request. When using impersonation, users will receive the user info of the user being impersonated.  If impersonation or request header authentication is used, any extra keys will have their case ignored and returned as lowercase.'),
  ...unstoredKindBehaviour,
  virtualCreate(_body, ctx) {
    if (!ctx.user) throw errors.badRequest('no user present on request');
    return { metadata: { creationTimestamp: formatTime(ctx.now) }, status: { userInfo: userInfoBody(ctx.user) } };
  },
};
selfSubjectReviewKind.schema.proto = { metadata: 1, status: 2 };
