package clientconn

import (
	"fmt"
	"strings"
)

// URLs returns the URL of every address Addr lists, in the order given,
// or DefaultAddr's when Addr is empty. Each entry is host:port or an
// http(s) URL; an empty entry, an address listed twice, or a list that
// mixes http and https is refused.
func (c Config) URLs() ([]string, error) {
	if c.Addr == "" {
		u, err := c.baseURL(DefaultAddr)
		return []string{u}, err
	}
	entries := strings.Split(c.Addr, ",")
	urls := make([]string, 0, len(entries))
	for i, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			return nil, fmt.Errorf("%w: address list %q has an empty entry (number %d); separate host:port addresses with single commas", ErrConfig, c.Addr, i+1)
		}
		u, err := c.baseURL(e)
		if err != nil {
			return nil, err
		}
		for _, prev := range urls {
			if prev == u {
				return nil, fmt.Errorf("%w: address list %q names %s twice; list each governord once", ErrConfig, c.Addr, e)
			}
			if scheme(prev) != scheme(u) {
				return nil, fmt.Errorf("%w: address list %q mixes http:// and https://; every node of a cluster is reached the same way", ErrConfig, c.Addr)
			}
		}
		urls = append(urls, u)
	}
	return urls, nil
}

// scheme is the scheme of a URL BaseURL made: http or https.
func scheme(url string) string {
	s, _, _ := strings.Cut(url, "://")
	return s
}
