/** The identity a request acts as (k8s.io/apiserver/pkg/authentication/user.Info). */
export interface UserInfo {
  name: string;
  uid?: string;
  groups: readonly string[];
  /** extra attributes (scopes, the node or pod a token is bound to), keys lower-cased as Kubernetes keeps them */
  extra?: Readonly<Record<string, readonly string[]>>;
}

export const anonymousUserName = 'system:anonymous';
export const unauthenticatedGroup = 'system:unauthenticated';
export const anonymousUser: UserInfo = Object.freeze({ name: anonymousUserName, groups: Object.freeze([unauthenticatedGroup]) });
export const authenticatedGroup = 'system:authenticated';
/** Members are allowed everything, whatever the authorization modes say. */
export const privilegedGroup = 'system:masters';
