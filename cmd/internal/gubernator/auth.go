package gubernator

import (
	"errors"

	"connectrpc.com/connect"

	"governor.dev/governor/cmd/internal/server"
)

// authenticate admits a call that carries, as Authorization: Bearer, the
// key of the service's tenant or the admin key, as governord's own API
// does for API keys.
func (s *Service) authenticate(h callHeader) error {
	cred, ok := server.BearerValue(h.authorization())
	if !ok {
		return connect.NewError(connect.CodeUnauthenticated, errors.New(msgNoCredential))
	}
	tenant, admin, ok := s.keys(cred)
	switch {
	case !ok:
		return connect.NewError(connect.CodeUnauthenticated, errors.New(msgUnknownKey))
	case !admin && tenant != s.tenant:
		return connect.NewError(connect.CodePermissionDenied, errors.New(
			"The key belongs to tenant "+tenant+"; the rate limits are kept under tenant "+s.tenant+": use its key or the admin key."))
	}
	return nil
}
