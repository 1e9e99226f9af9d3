package gubernator

import (
	"context"
	"strings"

	"google.golang.org/grpc/metadata"

	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
)

// ForwardedHeader marks a GetRateLimits call one cluster member passed to
// another it took for the leader. A member that does not lead refuses such
// a call (nothing applied) instead of passing it on again, so a call moves
// at most once between members.
const ForwardedHeader = "Governor-Forwarded"

// Forwarder passes a GetRateLimits call to the cluster's leader. It is
// asked, after the call is authenticated, whether this member answers the
// call itself (handled false: it leads, or runs alone). Otherwise it
// returns the leader's answer or error, as the caller sees it.
// authorization is the caller's Authorization header, to present to the
// leader; forwarded says another member already passed the call on. It
// is called concurrently.
type Forwarder interface {
	Forward(ctx context.Context, authorization string, forwarded bool, req *gubernatorv1.GetRateLimitsReq) (res *gubernatorv1.GetRateLimitsResp, handled bool, err error)
}

// value is the call's first value of header key.
func (h callHeader) value(key string) string {
	if h.http != nil {
		return h.http.Get(key)
	}
	if v := metadata.ValueFromIncomingContext(h.grpc, strings.ToLower(key)); len(v) > 0 {
		return v[0]
	}
	return ""
}

// forward asks the forwarder, if any, to answer the call.
func (s *Service) forward(ctx context.Context, h callHeader, m *gubernatorv1.GetRateLimitsReq) (*gubernatorv1.GetRateLimitsResp, bool, error) {
	if s.forwarder == nil {
		return nil, false, nil
	}
	return s.forwarder.Forward(ctx, h.authorization(), h.value(ForwardedHeader) != "", m)
}
