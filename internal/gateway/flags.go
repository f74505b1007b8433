package gateway

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/sim"
)

// Flags are the flags that read a gateway's config as the stack of
// policies to replay: --policy-from names the config, --policy-format,
// --policy-map and --descriptor say how to read it.
type Flags struct {
	From        string   // --policy-from
	Format      string   // --policy-format
	Map         []string // --policy-map NAME=FIELD
	Descriptors []string // --descriptor KEY=FIELD,...
	cfg         *Config  // the config, once Read
}

// AddFlags adds --policy-from and the flags that say how to read it to
// fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.From, "policy-from", "", "a gateway's config to replay as it is (nginx.conf, an Envoy ratelimit YAML, kong.yml, ...): its limits are a stack of policies")
	fs.StringVar(&f.Format, "policy-format", "", "the --policy-from config's format: "+Formats.String()+" (default: told from its content)")
	fs.StringArrayVar(&f.Map, "policy-map", nil, "NAME=FIELD: the trace field of a variable or header the config keys on ('$http_x_api_key=api_key'); repeatable")
	fs.StringArrayVar(&f.Descriptors, "descriptor", nil, "an Envoy descriptor a request sends, KEY=FIELD,... (remote_address=ip,path=path); repeatable")
}

// AddFormatFlags adds to fs the flags that say how to read a config
// named otherwise than by --policy-from (an argument, as lint's).
func (f *Flags) AddFormatFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Format, "policy-format", "", "the config's format: "+Formats.String()+" (default: told from its content)")
	fs.StringArrayVar(&f.Map, "policy-map", nil, "NAME=FIELD: the trace field of a variable or header the config keys on; repeatable")
	fs.StringArrayVar(&f.Descriptors, "descriptor", nil, "an Envoy descriptor a request sends, KEY=FIELD,...; repeatable")
}

// Options returns the read options the flags give.
func (f *Flags) Options() (Options, error) {
	opt := Options{Format: f.Format, Fields: map[string]string{}}
	for _, m := range f.Map {
		for _, kv := range strings.Split(m, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" || v == "" {
				return opt, &Error{At: spec.Source(fmt.Sprintf("--policy-map %q", m)), Msg: "want NAME=FIELD, such as '$http_x_api_key=api_key'"}
			}
			opt.Fields[k] = v
		}
	}
	for _, d := range f.Descriptors {
		es, err := ParseDescriptor(d)
		if err != nil {
			return opt, err
		}
		opt.Descriptors = append(opt.Descriptors, es)
	}
	return opt, nil
}

// Read reads the --policy-from config as a policy file.
func (f *Flags) Read() (*spec.File, error) {
	opt, err := f.Options()
	if err != nil {
		return nil, err
	}
	cfg, err := Read(f.From, opt)
	if err != nil {
		return nil, err
	}
	f.cfg = cfg
	return cfg.File, nil
}

// TakeWarnings returns the warnings of the config Read read, once:
// however often the policy is resolved, they are told once.
func (f *Flags) TakeWarnings() []Warning {
	if f.cfg == nil {
		return nil
	}
	w := f.cfg.Warnings
	f.cfg.Warnings = nil
	return w
}

// An ExportError is Export's refusal of a limiter as given: a mistake in
// how the program was called.
type ExportError struct{ Err error }

func (e *ExportError) Error() string { return e.Err.Error() }
func (e *ExportError) Unwrap() error { return e.Err }

// Usage reports that the error is a mistake in how the program was
// called.
func (e *ExportError) Usage() bool { return true }

// ExportLimiter resolves l, a limiter as given (a --limiter), with its
// durations in unit, and exports it as a config of target: the lane it
// resolves to, and the config. Export's refusal is an *ExportError.
func ExportLimiter(target string, l spec.Limiter, unit time.Duration) (sim.Lane, *Exported, error) {
	plan, err := spec.Resolve(spec.Inputs{Limiters: []spec.Limiter{l}, Single: true})
	if err != nil {
		return sim.Lane{}, nil, err
	}
	bound, err := plan.Bind(unit)
	if err != nil {
		return sim.Lane{}, nil, err
	}
	lane := bound.Lanes[0]
	ex, err := Export(target, lane)
	if err != nil {
		return lane, nil, &ExportError{err}
	}
	return lane, ex, nil
}
