package cli

import (
	"context"
	"fmt"
	"time"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	"governor.dev/governor/internal/clientconn"
	governorv1 "governor.dev/governor/internal/gen/governor/v1"
	"governor.dev/governor/internal/gen/governor/v1/governorv1connect"
)

// connFlags are the connection options every command takes in place of
// the environment.
type connFlags struct {
	addr   string
	tls    bool
	caFile string
}

func (f *connFlags) register(cmd *cobra.Command) {
	fl := cmd.PersistentFlags()
	fl.StringVar(&f.addr, "addr", "", "governord's host:port or URL, or a comma-separated list of a cluster's nodes, in place of "+clientconn.EnvAddr+" (default "+clientconn.DefaultAddr+")")
	fl.BoolVar(&f.tls, "tls", false, "use TLS with the system's roots, in place of "+clientconn.EnvTLS)
	fl.StringVar(&f.caFile, "ca-file", "", "use TLS and trust only this PEM file, in place of "+clientconn.EnvCAFile)
}

// config is the environment's connection settings with the flags over
// them, checked.
func (f *connFlags) config(cmd *cobra.Command) (clientconn.Config, error) {
	c, err := clientconn.FromEnv()
	if err != nil {
		return c, err
	}
	if f.addr != "" {
		c.Addr = f.addr
	}
	if cmd.Flags().Changed("tls") {
		c.TLS = f.tls
	}
	if f.caFile != "" {
		c.CAFile = f.caFile
	}
	if _, err := c.BaseURL(); err != nil {
		return c, err
	}
	return c, nil
}

// session is a session opened with an API key, for the calls that take a
// session token.
type session struct {
	api    governorv1connect.GovernorServiceClient
	token  string
	tenant string        // empty for the admin key
	ttl    time.Duration // what governord granted
}

// keyAPI is a client whose calls carry the configuration's key itself,
// and the configuration with its HTTP client, whose idle connections the
// caller closes. Such calls act through the key's durable principal
// session, which remembers request ids across processes.
func keyAPI(c clientconn.Config) (governorv1connect.GovernorServiceClient, clientconn.Config, error) {
	if c.APIKey == "" {
		return nil, c, fmt.Errorf("%w: %s is not set; it must hold an API key (a tenant's, or the admin key)", clientconn.ErrConfig, clientconn.EnvAPIKey)
	}
	hc, err := c.Client()
	if err != nil {
		return nil, c, err
	}
	c.HTTPClient = hc
	key, err := c.API(nil)
	return key, c, err
}

// openSession opens a session with the configuration's key.
func openSession(ctx context.Context, c clientconn.Config, client string) (*session, error) {
	key, c, err := keyAPI(c)
	if err != nil {
		return nil, err
	}
	res, err := key.OpenSession(ctx, connect.NewRequest(&governorv1.OpenSessionRequest{ClientName: client}))
	if err != nil {
		return nil, err
	}
	s := &session{token: res.Msg.GetToken(), tenant: res.Msg.GetTenant(), ttl: res.Msg.GetTtl().AsDuration()}
	if s.api, err = c.API(func() string { return s.token }); err != nil {
		return nil, err
	}
	return s, nil
}

// API is the client whose calls carry the session's token.
func (s *session) API() governorv1connect.GovernorServiceClient { return s.api }

// TTL is how long the session lives without a heartbeat.
func (s *session) TTL() time.Duration { return s.ttl }

// Close ends the session, within a second.
func (s *session) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, _ = s.api.CloseSession(ctx, connect.NewRequest(&governorv1.CloseSessionRequest{}))
}
