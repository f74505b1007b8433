// Package gateway reads the rate limits of a gateway's own config (an
// nginx.conf, an Envoy ratelimit service YAML, a Kong plugin, a Traefik
// middleware, Cloudflare's rules, ...) as the stack of policies a policy file's policies:
// gives, each at the line it was written on; says what a config will do
// that its author may not mean (lint); and writes a limiter back as a
// gateway's config (Export), saying what it had to approximate.
//
// Every error about a config is an *Error naming the file and line.
package gateway

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/ratesim/ratesim/internal/choice"
	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/limiters/presets"
)

// MaxConfigBytes caps the size of a config read.
const MaxConfigBytes = 4 << 20

// Formats are the configs Read understands, in the order they are sniffed.
var Formats = choice.List{
	{Name: "nginx", Description: "nginx.conf: limit_req_zone and limit_req, per location"},
	{Name: "envoy", Description: "Envoy's ratelimit service config: domain and nested descriptors"},
	{Name: "envoy-local", Description: "Envoy's local_ratelimit filter (also inside an Istio EnvoyFilter): token_bucket"},
	{Name: "kong", Description: "Kong's rate-limiting plugin: kong.yml or the plugin's config:"},
	{Name: "traefik", Description: "Traefik's rateLimit middleware (YAML dynamic config or a Middleware resource)"},
	{Name: "haproxy", Description: "haproxy.cfg: stick-table http_req_rate, track-sc0 and http-request deny"},
	{Name: "apigw", Description: "Amazon API Gateway throttling: a CloudFormation stage's MethodSettings and usage plans, or the API's JSON"},
	{Name: "cloudflare", Description: "Cloudflare rate limiting rules as the API gives them (JSON or YAML): ratelimit period, requests_per_period, mitigation_timeout, characteristics"},
}

// Options say how to read a config: its format and how its names for a
// request's parts become the trace's fields.
type Options struct {
	// Format is one of Formats, or "" to tell it from the content.
	Format string
	// Fields map the config's names (an nginx variable "$http_x_api_key",
	// a header "X-Api-Key", an HAProxy fetch "src") to trace fields, over
	// the defaults (FieldFor).
	Fields map[string]string
	// Descriptors are the descriptors a request sends to Envoy's
	// ratelimit service, each a list of entries: the descriptor key and
	// the trace field that gives its value.
	Descriptors [][]Entry
	// Lint reads the config for its warnings alone: what the replay
	// needs beyond the config (Envoy's --descriptor) may be missing.
	Lint bool
}

// An Entry is one entry of an Envoy descriptor: its key, and the trace
// field holding its value.
type Entry struct{ Key, Field string }

// ParseDescriptor parses a --descriptor value, KEY=FIELD,...
func ParseDescriptor(s string) ([]Entry, error) {
	var d []Entry
	for _, kv := range strings.Split(s, ",") {
		k, f, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || k == "" || f == "" {
			return nil, &Error{At: spec.Source("--descriptor " + s), Msg: fmt.Sprintf("%q is not KEY=FIELD (such as remote_address=ip)", kv)}
		}
		d = append(d, Entry{Key: k, Field: f})
	}
	return d, nil
}

// A Config is a gateway's config as read: the stack of policies it
// gives, in a policy file's shape, and the warnings found while reading.
type Config struct {
	Format   string
	File     *spec.File
	Warnings []Warning
	// zones are nginx's shared memory zones, for the trace's lint.
	zones []zone
}

// A Warning is something a config will do that its author may not mean.
type Warning struct {
	At  spec.Source // file:line
	Msg string
}

func (w Warning) String() string { return fmt.Sprintf("%s: warning: %s", w.At, w.Msg) }

// An Error is a mistake in a config, or in how it is asked to be read.
type Error struct {
	At  spec.Source // file:line, or the flag
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.At, e.Msg) }

// Usage reports that the error is a mistake in how ratesim was called.
func (e *Error) Usage() bool { return true }

// Read reads the config at path.
func Read(path string, opt Options) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxConfigBytes {
		return nil, &Error{At: spec.Source(path), Msg: fmt.Sprintf("config larger than %d bytes", MaxConfigBytes)}
	}
	return Parse(path, data, opt)
}

// Parse reads a config's text, data, read from path.
func Parse(path string, data []byte, opt Options) (*Config, error) {
	format := opt.Format
	if format == "" {
		format = Sniff(data)
		if format == "" {
			return nil, &Error{At: spec.Source(path), Msg: fmt.Sprintf("cannot tell which gateway's config this is: give --policy-format (valid: %s)", Formats)}
		}
	} else if Formats.Index(format) < 0 {
		return nil, &Error{At: "--policy-format", Msg: fmt.Sprintf("unknown format %q (valid: %s)", format, Formats)}
	}
	r := &reader{path: path, opt: opt, cfg: &Config{Format: format, File: &spec.File{Path: path}}}
	var err error
	switch format {
	case "nginx":
		err = r.nginx(data)
	case "envoy":
		err = r.envoy(data)
	case "envoy-local":
		err = r.envoyLocal(data)
	case "kong":
		err = r.kong(data)
	case "traefik":
		err = r.traefik(data)
	case "haproxy":
		err = r.haproxy(data)
	case "apigw":
		err = r.apigw(data)
	case "cloudflare":
		err = r.cloudflare(data)
	}
	if err != nil {
		return nil, err
	}
	if len(r.cfg.File.Policies) == 0 && !opt.Lint {
		return nil, &Error{At: spec.Source(path), Msg: fmt.Sprintf("no rate limit found in this %s config", format)}
	}
	return r.cfg, nil
}

// Sniff tells the format of a config from its content, "" when it cannot.
func Sniff(data []byte) string {
	has := func(s string) bool { return bytes.Contains(data, []byte(s)) }
	switch {
	case has("requests_per_period") || has("http_ratelimit"):
		return "cloudflare"
	case has("limit_req_zone") || has("limit_req "):
		return "nginx"
	case has("stick-table") || has("track-sc"):
		return "haproxy"
	case has("AWS::ApiGateway") || has("AWS::Serverless::Api") || has("hrottlingRateLimit") || has("burstLimit"):
		return "apigw"
	case has("token_bucket"):
		return "envoy-local"
	case has("rateLimit") || has("ratelimit:") && has("average"):
		return "traefik"
	case has("rate-limiting") || has("limit_by"):
		return "kong"
	case has("descriptors") && has("domain"):
		return "envoy"
	}
	return ""
}

// reader is one config being read.
type reader struct {
	path string
	opt  Options
	cfg  *Config
	// envoyTop are the top descriptors of an Envoy config.
	envoyTop []*envoyNode
}

// at is the source of line.
func (r *reader) at(line int) spec.Source { return spec.Source(fmt.Sprintf("%s:%d", r.path, line)) }

// errorf returns an *Error at line.
func (r *reader) errorf(line int, format string, args ...any) error {
	return &Error{At: r.at(line), Msg: fmt.Sprintf(format, args...)}
}

// warnf records a warning at line.
func (r *reader) warnf(line int, format string, args ...any) {
	r.cfg.Warnings = append(r.cfg.Warnings, Warning{At: r.at(line), Msg: fmt.Sprintf(format, args...)})
}

// preset returns the limiter of the preset named name with the
// parameters kvs, at line.
func (r *reader) preset(line int, name string, kvs [][2]string) (spec.Limiter, error) {
	p, ok := presets.Lookup(name)
	if !ok {
		return spec.Limiter{}, r.errorf(line, "this build has no %s preset to replay it with", name)
	}
	l, err := spec.PresetLimiter(p, kvs, r.at(line))
	if err != nil {
		return l, r.errorf(line, "%s", spec.Text(err))
	}
	return l, nil
}

// add adds a policy to the stack, its name made unique.
func (r *reader) add(p spec.StackPolicy) {
	name, n := p.Name, 1
	for slices.ContainsFunc(r.cfg.File.Policies, func(q spec.StackPolicy) bool { return q.Name == name }) {
		n++
		name = fmt.Sprintf("%s#%d", p.Name, n)
	}
	p.Name = name
	r.cfg.File.Policies = append(r.cfg.File.Policies, p)
}

// field returns the trace field for the config's name, a variable or
// header: the one --policy-map gives, else the default; ok false when
// there is none.
func (r *reader) field(name string) (string, bool) {
	if f, ok := r.opt.Fields[name]; ok {
		return f, true
	}
	return FieldFor(name)
}

// FieldFor is the default trace field of a name a config keys on: the
// client address of nginx, HAProxy and Traefik is "ip"; a header
// (nginx's $http_x_api_key, Traefik's requestHeaderName X-Api-Key) is its
// name in lower case with '_' for '-' ("x_api_key"), as a CSV column or
// JSON key would name it.
func FieldFor(name string) (string, bool) {
	switch name {
	case "$binary_remote_addr", "$remote_addr", "$realip_remote_addr", "src", "ip":
		return "ip", true
	case "$uri", "$request_uri", "$document_uri", "path":
		return "path", true
	case "$host", "$http_host", "host":
		return "host", true
	case "$remote_user":
		return "remote_user", true
	case "$request_method":
		return "method", true
	case "$http_user_agent":
		return "user_agent", true
	case "$http_referer":
		return "referer", true
	}
	if h, ok := strings.CutPrefix(name, "$http_"); ok && h != "" {
		return h, true
	}
	if strings.HasPrefix(name, "$") {
		return "", false
	}
	return headerField(name), true
}

// headerField is the trace field of a request header.
func headerField(h string) string {
	return strings.ReplaceAll(strings.ToLower(h), "-", "_")
}

// Source is the source of line of the config c was read from.
func Source(c *Config, line int) spec.Source {
	return spec.Source(fmt.Sprintf("%s:%d", c.File.Path, line))
}
