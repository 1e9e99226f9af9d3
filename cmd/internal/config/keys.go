package config

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
)

// KeyHashPrefix starts a key written as the hex SHA-256 of the real key, so
// that the file holds no usable secret: printf %s "$KEY" | sha256sum.
const KeyHashPrefix = "sha256:"

// MinKeyLength is the shortest plain-text key accepted.
const MinKeyLength = 16

// MatchKey finds the configured key equal to presented: the admin key, with
// admin true and no tenant, or a tenant's key, with its name. Keys in
// sha256: form match the key they are the hash of. Every configured key is
// compared, each in constant time, so the time taken does not reveal which
// key matched or how much of one did.
func (c *Config) MatchKey(presented string) (tenant string, admin bool, ok bool) {
	return c.KeyMatcher()(presented)
}

// KeyMatcher returns MatchKey for the keys configured when it is called,
// with their digests worked out once rather than on every call: what a
// server that checks a key on every call uses.
func (c *Config) KeyMatcher() func(presented string) (tenant string, admin bool, ok bool) {
	adminKey := configuredDigest(c.AdminKey)
	names := make([]string, len(c.Tenants))
	tenants := make([]configuredKey, len(c.Tenants))
	for i, t := range c.Tenants {
		names[i], tenants[i] = t.Name, configuredDigest(t.APIKey)
	}
	return func(presented string) (string, bool, bool) {
		if presented == "" {
			return "", false, false
		}
		digest := sha256.Sum256([]byte(presented))
		admin := adminKey.matches(&digest)
		found := -1
		for i := range tenants {
			if tenants[i].matches(&digest) && found < 0 {
				found = i
			}
		}
		switch {
		case admin:
			return "", true, true
		case found >= 0:
			return names[found], false, true
		}
		return "", false, false
	}
}

// configuredKey is the SHA-256 a configured key stands for; an empty or
// malformed key (valid false) matches nothing.
type configuredKey struct {
	digest [sha256.Size]byte
	valid  bool
}

func configuredDigest(key string) configuredKey {
	digest, problem := keyDigest(key)
	return configuredKey{digest: digest, valid: key != "" && problem == ""}
}

// matches reports whether k stands for the key whose SHA-256 is
// presented, comparing in constant time.
func (k configuredKey) matches(presented *[sha256.Size]byte) bool {
	return subtle.ConstantTimeCompare(k.digest[:], presented[:]) == 1 && k.valid
}

// keyDigest returns the SHA-256 a configured key stands for, or what a key
// must look like. Messages never repeat the key.
func keyDigest(key string) (digest [sha256.Size]byte, problem string) {
	if hexDigest, ok := strings.CutPrefix(key, KeyHashPrefix); ok {
		if len(hexDigest) != 2*sha256.Size {
			return digest, fmt.Sprintf("%s must be followed by %d hex digits, the SHA-256 of the key; got %d characters",
				KeyHashPrefix, 2*sha256.Size, len(hexDigest))
		}
		if _, err := hex.Decode(digest[:], []byte(hexDigest)); err != nil {
			return digest, fmt.Sprintf("%s must be followed by %d hex digits, the SHA-256 of the key; got a character that is not a hex digit",
				KeyHashPrefix, 2*sha256.Size)
		}
		return digest, ""
	}
	if len(key) < MinKeyLength {
		return digest, fmt.Sprintf("must be at least %d characters, or %s and %d hex digits; got %d characters",
			MinKeyLength, KeyHashPrefix, 2*sha256.Size, len(key))
	}
	for i := range len(key) {
		if key[i] <= ' ' || key[i] > '~' {
			return digest, "must be printable ASCII without spaces, as it travels in an Authorization header"
		}
	}
	return sha256.Sum256([]byte(key)), ""
}

// checkKeys checks the form of every key and that no two are the same.
func (c *Config) checkKeys(k *checker) {
	seen := map[[sha256.Size]byte]string{}
	check := func(path, key string) {
		digest, problem := keyDigest(key)
		if problem != "" {
			k.add(path, "%s", problem)
			return
		}
		if other, ok := seen[digest]; ok {
			k.add(path, "the same key as %s; every key must be different", other)
			return
		}
		seen[digest] = path
	}
	if c.AdminKey != "" {
		check("admin_key", c.AdminKey)
	}
	for i, t := range c.Tenants {
		path := fmt.Sprintf("tenants[%d].api_key", i)
		if t.APIKey == "" {
			k.add(path, "required: at least %d characters, or %s and %d hex digits", MinKeyLength, KeyHashPrefix, 2*sha256.Size)
			continue
		}
		check(path, t.APIKey)
	}
}
