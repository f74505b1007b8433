package gateway

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ratesim/ratesim/traces"
)

// maxLintKeys bounds the keys LintTrace counts per policy: past it, it
// knows enough to say a zone is too small.
const maxLintKeys = 1 << 20

// nginxStateBytes is what one key's state takes in an nginx zone: "one
// megabyte zone can keep about 16 thousand 64-byte states"
// (ngx_http_limit_req_module's documentation).
const nginxStateBytes = 64

// An EventSource yields a trace's events, io.EOF at its end.
type EventSource interface {
	Next() (*traces.Event, error)
}

// LintTrace reads a trace and warns of what the config does to it: a
// policy whose key is the same for every request it applies to (every
// client shares one limit), an nginx zone too small for the trace's keys
// (nginx then forgets the least recently used, which changes decisions).
func (c *Config) LintTrace(src EventSource) ([]Warning, error) {
	pols := c.File.Policies
	keys := make([]map[string]bool, len(pols))
	for i := range keys {
		keys[i] = map[string]bool{}
	}
	var values [][]byte
	var key []byte
	for {
		ev, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for i, p := range pols {
			if len(p.Key) == 0 || len(keys[i]) > maxLintKeys {
				continue
			}
			if m := p.Match; m != nil {
				values = values[:0]
				missing := false
				for _, f := range m.Fields {
					v, ok := ev.Attr(f)
					missing = missing || !ok
					values = append(values, v)
				}
				if missing || !m.Applies(values) {
					continue
				}
			}
			key = key[:0]
			for _, f := range p.Key {
				v, ok := ev.Attr(f)
				if !ok {
					return nil, fmt.Errorf("%s:%d: policy %s keys on %q, which the trace does not have (map it with --policy-map or --descriptor)", ev.File, ev.Line, p.Name, f)
				}
				key = append(append(key, v...), 0)
			}
			keys[i][string(key)] = true
		}
	}
	var out []Warning
	for i, p := range pols {
		if len(p.Key) > 0 && len(keys[i]) == 1 {
			out = append(out, Warning{At: p.At, Msg: fmt.Sprintf("policy %s keys on %s, which is the same for every request of the trace: every client shares one limit", p.Name, strings.Join(p.Key, ", "))})
		}
	}
	for _, z := range c.zones {
		for i, p := range pols {
			if p.Name != z.name {
				continue
			}
			if states := z.bytes / nginxStateBytes; int64(len(keys[i])) > states {
				n := fmt.Sprint(len(keys[i]))
				if len(keys[i]) > maxLintKeys {
					n = "more than " + fmt.Sprint(maxLintKeys)
				}
				out = append(out, Warning{At: Source(c, z.line), Msg: fmt.Sprintf("zone %s holds about %d states of %d bytes; the trace has %s keys for it: nginx forgets the least recently used when it is full, which changes decisions (ratesim keeps every key)", z.name, states, nginxStateBytes, n)})
			}
		}
	}
	return out, nil
}
