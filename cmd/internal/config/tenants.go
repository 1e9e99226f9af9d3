package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
)

// Name rules: tenants may start with a digit, resources and classes may not.
var (
	tenantName   = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*$`)
	resourceName = regexp.MustCompile(`^[a-z][a-z0-9_.-]*$`)
)

// maxNameLength bounds tenant, resource and class names.
const maxNameLength = 64

// MaxWeight is the largest tenant weight.
const MaxWeight = 1000

// checkTenants checks each tenant's name, weight, caps and defaults. Keys
// are checked with the admin key by checkKeys.
func (c *Config) checkTenants(k *checker) {
	first := map[string]int{}
	for i, t := range c.Tenants {
		path := fmt.Sprintf("tenants[%d]", i)
		switch {
		case t.Name == "":
			k.add(path+".name", "required: 1 to %d characters of a-z, 0-9, '_', '.' and '-', starting with a letter or digit", maxNameLength)
		case len(t.Name) > maxNameLength || !tenantName.MatchString(t.Name):
			k.add(path+".name", "must be 1 to %d characters of a-z, 0-9, '_', '.' and '-', starting with a letter or digit; got %q", maxNameLength, t.Name)
		}
		if j, ok := first[t.Name]; ok && t.Name != "" {
			k.add(path+".name", "%q is already the name of tenants[%d]; tenant names must be unique", t.Name, j)
		} else {
			first[t.Name] = i
		}
		k.between(path+".weight", int64(t.Weight), 1, MaxWeight)
		checkCaps(k, path, Caps{Quotas: t.Quotas, Limits: t.Limits, Rates: t.Rates})
		checkCaps(k, path+".defaults", Caps{Quotas: t.Defaults.Quotas, Limits: t.Defaults.Limits, Rates: t.Defaults.Rates})
		checkCaps(k, path+".defaults.children", t.Defaults.Children)
	}
}

// checkCaps checks the names and values of quotas and limits under path.
func checkCaps(k *checker, path string, caps Caps) {
	checkAmounts(k, path+".quotas", caps.Quotas, "resource")
	checkAmounts(k, path+".limits", caps.Limits, "class")
	checkRates(k, path+".rates", caps.Rates)
}

// checkAmounts checks a map of names (of the given kind) to amounts >= 0.
func checkAmounts(k *checker, path string, m map[string]int64, kind string) {
	for _, name := range sortedKeys(m) {
		if checkName(k, path+"."+name, name, kind) {
			k.atLeast(path+"."+name, m[name], 0)
		}
	}
}

// checkName checks a resource or class name and reports whether it is valid.
func checkName(k *checker, path, name, kind string) bool {
	if len(name) <= maxNameLength && resourceName.MatchString(name) {
		return true
	}
	k.add(path, "not a valid %s name: use 1 to %d characters of a-z, 0-9, '_', '.' and '-', starting with a letter", kind, maxNameLength)
	return false
}

// sortedKeys returns m's keys in order, so problems come out the same way
// every time.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
