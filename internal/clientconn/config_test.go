package clientconn

import (
	"errors"
	"strings"
	"testing"
)

func TestBaseURL(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
		err  string
	}{
		{"default", Config{}, "http://127.0.0.1:7600", ""},
		{"host port", Config{Addr: "gov.internal:9000"}, "http://gov.internal:9000", ""},
		{"tls flag", Config{Addr: "gov:9000", TLS: true}, "https://gov:9000", ""},
		{"ca implies tls", Config{Addr: "gov:9000", CAFile: "ca.pem"}, "https://gov:9000", ""},
		{"https url", Config{Addr: "https://gov:9000/"}, "https://gov:9000", ""},
		{"http url", Config{Addr: "http://[::1]:7600"}, "http://[::1]:7600", ""},
		{"http url with tls", Config{Addr: "http://gov:1", TLS: true}, "", "says http://"},
		{"no port", Config{Addr: "gov"}, "", "not host:port"},
		{"bad port", Config{Addr: "gov:http"}, "", "port \"http\""},
		{"port out of range", Config{Addr: "gov:70000"}, "", "1 to 65535"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.cfg.BaseURL()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || !errors.Is(err, ErrConfig) {
					t.Fatalf("BaseURL() = %q, %v; want an ErrConfig naming %q", got, err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("BaseURL() = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(EnvAddr, " gov:1234 ")
	t.Setenv(EnvAPIKey, "k1")
	t.Setenv(EnvTLS, "true")
	t.Setenv(EnvCAFile, "/etc/ca.pem")
	got, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Addr: "gov:1234", APIKey: "k1", TLS: true, CAFile: "/etc/ca.pem"}
	if got != want {
		t.Fatalf("FromEnv() = %+v, want %+v", got, want)
	}
	t.Setenv(EnvTLS, "sometimes")
	if _, err := FromEnv(); err == nil || !strings.Contains(err.Error(), "not a boolean") {
		t.Fatalf("FromEnv with a bad %s = %v, want an error saying it is not a boolean", EnvTLS, err)
	}
}

func TestClientRejectsBadCAFile(t *testing.T) {
	if _, err := (Config{CAFile: t.TempDir() + "/missing.pem"}).Client(); !errors.Is(err, ErrConfig) {
		t.Fatalf("missing CA file: %v, want ErrConfig", err)
	}
}
