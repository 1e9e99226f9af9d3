package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"governor.dev/governor/cmd/internal/engine"
)

// tokenBytes is the size of a session token's secret: 128 random bits,
// sent as 32 lowercase hex digits.
const tokenBytes = 16

// principal is who a call acts as: a session and the node it is confined
// to. A call made with an API key acts as the key's principal session.
type principal struct {
	session engine.ID
	scope   engine.ID
}

// Bearer returns the credential of an Authorization: Bearer header, and
// false when there is none.
func Bearer(h http.Header) (string, bool) {
	return BearerValue(h.Get("Authorization"))
}

// BearerValue returns the credential of v, an Authorization header's
// value of the form "Bearer credential", and false when it is not one.
func BearerValue(v string) (string, bool) {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(v), " ")
	cred = strings.TrimSpace(cred)
	return cred, ok && strings.EqualFold(scheme, "Bearer") && cred != ""
}

// bearer returns the credential of an Authorization: Bearer header.
func bearer(h http.Header) (string, error) {
	cred, ok := Bearer(h)
	if !ok {
		return "", unauthenticated("Missing credential: send the header Authorization: Bearer with a session token or an API key.")
	}
	return cred, nil
}

// isToken reports whether cred has the form of a session token. Only such
// strings are looked up as tokens, so no other preimage of a stored token
// hash, such as a key principal's, can ever be presented.
func isToken(cred string) bool {
	if len(cred) != 2*tokenBytes {
		return false
	}
	for i := range len(cred) {
		if c := cred[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func tokenHash(token string) [32]byte { return sha256.Sum256([]byte(token)) }

// newToken returns a fresh session token and the hash the engine keeps.
func newToken() (string, [32]byte) {
	var b [tokenBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	tok := hex.EncodeToString(b[:])
	return tok, tokenHash(tok)
}

// byToken finds the live session a token names. It fails only when the
// backend cannot look (a cluster member that is not the leader).
func (s *Server) byToken(cred string) (principal, bool, error) {
	if !isToken(cred) {
		return principal{}, false, nil
	}
	info, ok, err := s.store.SessionByToken(tokenHash(cred))
	if err != nil {
		return principal{}, false, toConnect(err)
	}
	return principal{session: info.ID, scope: info.Scope}, ok, nil
}

// session authenticates a call that needs a session token.
func (s *Server) session(ctx context.Context, h http.Header) (principal, error) {
	cred, err := bearer(h)
	if err != nil {
		return principal{}, err
	}
	if p, ok, err := s.byToken(cred); err != nil {
		return principal{}, err
	} else if ok {
		s.notePrincipal(ctx, p)
		return p, nil
	}
	if _, _, ok := s.keys(cred); ok {
		return principal{}, unauthenticated("This call needs a session token, not an API key: open a session with OpenSession and send its token.")
	}
	return principal{}, unauthenticated("Unknown or ended session token; open a new session with OpenSession.")
}

// sessionOrKey authenticates a call that takes a session token or an API
// key. A key acts through its principal session.
func (s *Server) sessionOrKey(ctx context.Context, h http.Header) (principal, error) {
	cred, err := bearer(h)
	if err != nil {
		return principal{}, err
	}
	if p, ok, err := s.byToken(cred); err != nil {
		return principal{}, err
	} else if ok {
		s.notePrincipal(ctx, p)
		return p, nil
	}
	tenant, admin, ok := s.keys(cred)
	if !ok {
		return principal{}, unauthenticated("The credential is neither a live session token nor an API key; open a new session with OpenSession, or check the key.")
	}
	p, err := s.keyPrincipal(ctx, tenant, admin)
	if err == nil {
		s.notePrincipal(ctx, p)
	}
	return p, err
}

// apiKey authenticates OpenSession, which needs an API key, and returns the
// key's scope and tenant.
func (s *Server) apiKey(h http.Header) (engine.ID, string, error) {
	cred, err := bearer(h)
	if err != nil {
		return 0, "", err
	}
	tenant, admin, ok := s.keys(cred)
	if !ok {
		if _, isSession, _ := s.byToken(cred); isSession {
			return 0, "", unauthenticated("OpenSession needs an API key; the credential sent is a session token.")
		}
		return 0, "", unauthenticated("The API key matches none that governord is configured with.")
	}
	scope, err := s.keyScope(tenant, admin)
	return scope, tenant, err
}

// keyScope is the node a key confines its holder to.
func (s *Server) keyScope(tenant string, admin bool) (engine.ID, error) {
	if admin {
		return engine.RootID, nil
	}
	id, ok := s.tenants(tenant)
	if !ok {
		return 0, unavailable("Tenant " + tenant + " has no node yet; retry once governord has reconciled its configuration.")
	}
	return id, nil
}

// principalHash names a key holder's principal session: the SHA-256 of a
// string that is not 32 hex digits, so it is no token anyone can present.
func principalHash(tenant string, admin bool) [32]byte {
	if admin {
		return sha256.Sum256([]byte("governor key principal\x00admin"))
	}
	return sha256.Sum256([]byte("governor key principal\x00tenant\x00" + tenant))
}

// keyPrincipal returns the durable session that calls made directly with a
// key act through, opening it on first use. It never expires, so its
// request ids are remembered like any session's, across restarts too.
func (s *Server) keyPrincipal(ctx context.Context, tenant string, admin bool) (principal, error) {
	h := principalHash(tenant, admin)
	if info, ok, err := s.store.SessionByToken(h); err != nil || ok {
		return principal{session: info.ID, scope: info.Scope}, toConnect(err)
	}
	scope, err := s.keyScope(tenant, admin)
	if err != nil {
		return principal{}, err
	}
	s.principals.Lock()
	defer s.principals.Unlock()
	if info, ok, err := s.store.SessionByToken(h); err != nil || ok {
		return principal{session: info.ID, scope: info.Scope}, toConnect(err)
	}
	if err := s.room(ctx); err != nil {
		return principal{}, err
	}
	c := &engine.Call{}
	info, err := s.store.OpenSession(c, scope, 0, h)
	if err := s.settle(ctx, c.Seq, err); err != nil {
		return principal{}, err
	}
	return principal{session: info.ID, scope: info.Scope}, nil
}
