package gateway

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlDocs parses the YAML documents of data (a Kubernetes manifest may
// hold several).
func (r *reader) yamlDocs(data []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			msg := strings.TrimPrefix(err.Error(), "yaml: ")
			if rest, ok := strings.CutPrefix(msg, "line "); ok {
				if l, m, ok := strings.Cut(rest, ": "); ok {
					if line, err := strconv.Atoi(l); err == nil {
						return nil, r.errorf(line, "%s", m)
					}
				}
			}
			return nil, r.errorf(1, "%s", msg)
		}
		if len(n.Content) > 0 {
			docs = append(docs, n.Content[0])
		}
	}
}

// fields returns the values of mapping n by key, checking that every key
// is one of known.
func (r *reader) fields(n *yaml.Node, what string, known ...string) (map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, r.errorf(n.Line, "%s must be a mapping", what)
	}
	m := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ok := false
		for _, name := range known {
			if k.Value == name {
				ok = true
			}
		}
		if !ok {
			return nil, r.errorf(k.Line, "%s: unknown key %q (valid: %s)", what, k.Value, strings.Join(known, ", "))
		}
		if _, dup := m[k.Value]; dup {
			return nil, r.errorf(k.Line, "%s: %s given twice", what, k.Value)
		}
		m[k.Value] = v
	}
	return m, nil
}

// get returns the value of key in mapping n, nil when it has none.
func get(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// scalar returns the text of n, which must be a scalar.
func (r *reader) scalar(n *yaml.Node, what string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Value == "" {
		return "", r.errorf(n.Line, "%s must be a single value", what)
	}
	return n.Value, nil
}

// whole returns n as a whole number of at least least.
func (r *reader) whole(n *yaml.Node, what string, least int64) (int64, error) {
	s, err := r.scalar(n, what)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, r.errorf(n.Line, "%s %q: want a whole number", what, s)
	}
	if v < least {
		return 0, r.errorf(n.Line, "%s must be at least %d, got %d", what, least, v)
	}
	return v, nil
}

// boolean returns n as true or false.
func (r *reader) boolean(n *yaml.Node, what string) (bool, error) {
	var b bool
	if n.Kind != yaml.ScalarNode || n.Decode(&b) != nil {
		return false, r.errorf(n.Line, "%s must be true or false", what)
	}
	return b, nil
}
