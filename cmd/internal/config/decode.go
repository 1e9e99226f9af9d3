package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// maxVisits bounds the nodes one file may expand to through aliases.
const maxVisits = 100_000

// decoder fills a Config from a YAML node tree. Unlike the YAML library's
// strict mode it reports every mistake rather than the first, names each by
// its field path as well as its line, and remembers where every field was
// written so that later validation can point at it.
type decoder struct {
	getenv   func(string) (string, bool)
	lines    map[string]int // the line each decoded field path is written on
	problems []Problem
	visits   int
	tooLarge bool // set when visits passed maxVisits; decoding stopped
}

// defaulter is implemented by list and map elements whose keys have
// defaults other than the zero value.
type defaulter interface{ setDefaults() }

var durationType = reflect.TypeFor[time.Duration]()

// decode fills v, the value at path, from n. A null node leaves v as it was.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if d.tooLarge {
		return
	}
	if d.visits++; d.visits > maxVisits {
		d.tooLarge = true
		d.problems = []Problem{{Line: n.Line, Message: fmt.Sprintf("the file expands to more than %d values through aliases", maxVisits)}}
		return
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	d.lines[path] = n.Line
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.Slice:
		d.decodeSlice(n, v, path)
	default:
		d.decodeScalar(n, v, path)
	}
}

// decodeStruct fills a struct from a mapping whose keys are its yaml tags.
func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) {
	if !d.expect(n, yaml.MappingNode, path, "a mapping of keys") {
		return
	}
	fields := map[string]int{}
	var names []string
	for i := range v.NumField() {
		name := v.Type().Field(i).Tag.Get("yaml")
		fields[name] = i
		names = append(names, name)
	}
	d.eachPair(n, path, func(key string, keyNode, value *yaml.Node) {
		i, ok := fields[key]
		if !ok {
			d.fail(keyNode, join(path, key), "unknown key; allowed here: "+strings.Join(names, ", "))
			return
		}
		d.decode(value, v.Field(i), join(path, key))
		d.lines[join(path, key)] = keyNode.Line
	})
}

// decodeMap fills a map with string keys from a mapping.
func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string) {
	if !d.expect(n, yaml.MappingNode, path, "a mapping of names to values") {
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	d.eachPair(n, path, func(key string, keyNode, value *yaml.Node) {
		elem := newElem(v.Type().Elem())
		d.decode(value, elem, join(path, key))
		d.lines[join(path, key)] = keyNode.Line
		v.SetMapIndex(reflect.ValueOf(key), elem)
	})
}

// decodeSlice fills a slice from a sequence.
func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string) {
	if !d.expect(n, yaml.SequenceNode, path, "a list") {
		return
	}
	s := reflect.MakeSlice(v.Type(), 0, len(n.Content))
	for i, item := range n.Content {
		elem := newElem(v.Type().Elem())
		d.decode(item, elem, fmt.Sprintf("%s[%d]", path, i))
		s = reflect.Append(s, elem)
	}
	v.Set(s)
}

// eachPair calls f for each key of a mapping, reporting keys that are not
// plain scalars or that repeat an earlier key.
func (d *decoder) eachPair(n *yaml.Node, path string, f func(key string, keyNode, value *yaml.Node)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		keyNode, value := n.Content[i], n.Content[i+1]
		if keyNode.Kind != yaml.ScalarNode {
			d.fail(keyNode, path, "keys must be plain names, got "+describe(keyNode))
			continue
		}
		key := keyNode.Value
		if first, ok := seen[key]; ok {
			d.fail(keyNode, join(path, key), fmt.Sprintf("duplicate key; first given on line %d", first))
			continue
		}
		seen[key] = keyNode.Line
		f(key, keyNode, value)
	}
}

// decodeScalar fills a string, bool, integer, float or duration from a
// scalar after expanding its environment variables.
func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path string) {
	if !d.expect(n, yaml.ScalarNode, path, "a single value") {
		return
	}
	text, err := expand(n.Value, d.getenv)
	if err != nil {
		d.fail(n, path, err.Error())
		return
	}
	if msg := setScalar(v, text); msg != "" {
		d.fail(n, path, fmt.Sprintf("%s, got %q", msg, text))
	}
}

// setScalar parses text into v and returns what was expected if it cannot.
func setScalar(v reflect.Value, text string) string {
	switch {
	case v.Type() == durationType:
		dur, err := time.ParseDuration(text)
		if err != nil {
			return "must be a duration such as 500ms, 30s or 5m"
		}
		v.SetInt(int64(dur))
	case v.Kind() == reflect.String:
		v.SetString(text)
	case v.Kind() == reflect.Bool:
		switch text {
		case "true", "True", "TRUE":
			v.SetBool(true)
		case "false", "False", "FALSE":
			v.SetBool(false)
		default:
			return "must be true or false"
		}
	case v.Kind() == reflect.Float64:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return "must be a number"
		}
		v.SetFloat(f)
	case v.CanInt():
		i, err := strconv.ParseInt(text, 0, v.Type().Bits())
		if err != nil {
			return "must be a whole number"
		}
		v.SetInt(i)
	default:
		panic("config: no decoder for " + v.Type().String())
	}
	return ""
}

// expect reports a problem unless n is of the wanted kind.
func (d *decoder) expect(n *yaml.Node, kind yaml.Kind, path, want string) bool {
	if n.Kind == kind {
		return true
	}
	d.fail(n, path, "must be "+want+", got "+describe(n))
	return false
}

// fail records a problem at n's line.
func (d *decoder) fail(n *yaml.Node, path, msg string) {
	d.problems = append(d.problems, Problem{Line: n.Line, Path: path, Message: msg})
}

// newElem returns a settable zero element of t with its defaults applied.
func newElem(t reflect.Type) reflect.Value {
	elem := reflect.New(t)
	if def, ok := elem.Interface().(defaulter); ok {
		def.setDefaults()
	}
	return elem.Elem()
}

// describe names a node's kind for a message.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return strconv.Quote(n.Value)
	}
}

// join appends a key to a field path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
