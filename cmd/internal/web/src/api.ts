// The connection to governord: a Connect client on the page's own origin
// that sends the API key until a session is open and its token afterwards.
import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { GovernorService } from "./gen/governor/v1/governor_pb";

export type Api = Client<typeof GovernorService>;

// The key lives in sessionStorage only: it ends with the tab, and it is
// never put in a cookie or a URL.
const keyItem = "governor.key";

export const storedKey = (): string | null => sessionStorage.getItem(keyItem);
export const storeKey = (k: string): void => sessionStorage.setItem(keyItem, k);
export const forgetKey = (): void => sessionStorage.removeItem(keyItem);

export interface Session {
  api: Api;
  scope: bigint;
  tenant: string;
  ttlMs: number;
}

// signIn opens a session with key and returns a client that uses its token.
export async function signIn(key: string): Promise<Session> {
  let cred = key;
  const auth: Interceptor = (next) => (req) => {
    req.header.set("Authorization", "Bearer " + cred);
    return next(req);
  };
  const api = createClient(GovernorService, createConnectTransport({ baseUrl: location.origin, interceptors: [auth] }));
  const res = await api.openSession({ clientName: "governor dashboard" });
  cred = res.token;
  const ttl = res.ttl;
  const ttlMs = ttl ? Number(ttl.seconds) * 1000 + ttl.nanos / 1e6 : 30000;
  return { api, scope: res.scopeNodeId, tenant: res.tenant, ttlMs };
}

// message is what a person reads of a failed call: governord's own words,
// which name the field or cap and what is allowed.
export function message(e: unknown): string {
  if (e instanceof ConnectError) {
    if (e.code === Code.Unauthenticated && /matches none|neither/.test(e.rawMessage)) {
      return "That API key is not one governord knows. Check it and try again.";
    }
    return e.rawMessage || e.message;
  }
  return e instanceof Error ? e.message : String(e);
}

export const isAuthError = (e: unknown): boolean => e instanceof ConnectError && e.code === Code.Unauthenticated;
export const isAbort = (e: unknown): boolean => e instanceof ConnectError && e.code === Code.Canceled;
