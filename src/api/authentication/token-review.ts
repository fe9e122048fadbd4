/**
 * TokenReview (`authentication.orch.io/v1`): a create that is answered, never stored. The token
 * is checked by the server's token authenticators for the audiences asked (the API's by default).
 */
import type { UserInfo } from '../../auth/user.js';
import { errors } from '../../status/status-error.js';
import { builtinKind, type KindDeclaration } from '../kind.js';
import { typeAndMeta, type KObject } from '../meta.js';
import { s } from '../schema/builtin-structural.js';
import { serviceKey } from '../services.js';
import { authenticationGroup, unstoredKindBehaviour } from './group.js';
import { userInfoBody, userInfoStructural } from './user-info.js';

/** What the server's token authenticators say about a token. */
export interface TokenReviewResult {
  user?: UserInfo;
  /** the audiences the token is valid for, of those asked */
  audiences?: string[];
  /** why the token was refused, as TokenReview.status.error carries it */
  error?: string;
}

export interface TokenReviewer {
  /** `audiences` empty: the API's own */
  review(token: string, audiences: readonly string[]): Promise<TokenReviewResult>;
}

export const tokenReviewer = serviceKey<TokenReviewer>('token reviewer');

const tokenReviewSpec = s.struct('TokenReviewSpec', {
  token: s.string('Token is the opaque bearer token.'),
  audiences: s.atomicList(s.string(), 'Audiences is a list of the identifiers that the resource server presented with the token identifies as. Audience-aware token authenticators will verify that the token was intended for at least one of the audiences in this list. If no audiences are provided, the audience will default to the audience of the Kubernetes apiserver.'),
}, 'TokenReviewSpec is a description of the token authentication request.', { proto: { token: 1, audiences: 2 } });

const tokenReviewStatus = s.struct('TokenReviewStatus', {
  authenticated: s.boolean('Authenticated indicates that the token was associated with a known user.'),
  user: userInfoStructural,
  audiences: s.atomicList(s.string(), "Audiences are audience identifiers chosen by the authenticator that are compatible with both the TokenReview and token. An identifier is any identifier in the intersection of the TokenReviewSpec audiences and the token's audiences."),
  error: s.string("Error indicates that the token couldn't be checked"),
}, 'TokenReviewStatus is the result of the token authentication request.', { proto: { authenticated: 1, user: 2, error: 3, audiences: 4 } });

interface TokenReviewBody extends KObject {
  spec?: { token?: string; audiences?: string[] };
}

export const tokenReviewKind: KindDeclaration = builtinKind({
  group: authenticationGroup, version: 'v1', kind: 'TokenReview', listKind: 'TokenReviewList',
  resource: 'tokenreviews', singular: 'tokenreview', shortNames: [], namespaced: false,
  verbs: ['create'],
  structural: s.struct('TokenReview', typeAndMeta({
    spec: tokenReviewSpec,
    status: tokenReviewStatus,
  }), 'TokenReview attempts to authenticate a token to a known user. Note: TokenReview requests may be cached by the webhook token authenticator plugin in the kube-apiserver.', {
    proto: { metadata: 1, spec: 2, status: 3 },
    // Go serializes spec without omitempty: Kubernetes' OpenAPI lists it as required
    required: ['spec'],
  }),
  ...unstoredKindBehaviour,
  async virtualCreate(body, ctx) {
    const review = body as TokenReviewBody;
    const token = review.spec?.token ?? '';
    if (token === '') throw errors.badRequest('token is required for TokenReview in authentication');
    const result = await ctx.services.get(tokenReviewer).review(token, review.spec?.audiences ?? []);
    const status: Record<string, unknown> = {};
    if (result.user) status.authenticated = true;
    status.user = result.user ? userInfoBody(result.user) : {};
    if (result.audiences && result.audiences.length > 0) status.audiences = result.audiences;
    if (result.error) status.error = result.error;
    return { ...review, status };
  },
});
