package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/limiters/presets"
	"github.com/ratesim/ratesim/sim"
)

// MaxFileBytes caps the size of a policy file.
const MaxFileBytes = 1 << 20

// A File is a parsed --config file: parameters shared by every limiter,
// overrides per algorithm, limiters of their own or a stack of policies,
// and the replay's key, unit, interval and intent.
type File struct {
	Path     string
	Shared   Params
	Algos    map[limiters.Algorithm]Params // algorithms:, overrides per algorithm
	Limiters []Limiter                     // limiters:
	AlgoList []limiters.Algorithm          // algos:, nil when not given
	Key      []string                      // key:, nil when not given
	Unit     string                        // unit:, "" when not given
	Interval Setting                       // interval:, Value "" when not given
	Intent   Setting                       // intent: LIMIT/WINDOW, Value "" when not given
	Policies []StackPolicy                 // policies:, a stack
	// Stack is how the stack's policies take a request another refused
	// ("consume" or "refund"), when the file says so (a gateway's config
	// read by internal/gateway does: nginx and Kong take a request in all
	// their limits or none); "" when it does not.
	Stack string
}

// A StackPolicy is one policy of a stack (a policy file's policies:
// list): a named limiter, what it keys on, and whether it only watches.
type StackPolicy struct {
	Limiter
	// Key names the trace attributes it keys on: nil for the replay's
	// key, empty for one global key.
	Key    []string
	Shadow bool
	// Match, when not nil, says which requests it applies to (a
	// gateway's location or descriptor); nil for every request.
	Match *sim.Match
	// EmptyKeyOnly says that Match leaves out only the requests whose
	// key values are all empty (nginx does not account them).
	EmptyKeyOnly bool
}

// The YAML shape of a policy file: the parameters shared by every
// limiter are the keys not named here.
type yamlPolicy struct {
	Algorithms yaml.Node            `yaml:"algorithms"`
	Limiters   yaml.Node            `yaml:"limiters"`
	Algos      yaml.Node            `yaml:"algos"`
	Key        yaml.Node            `yaml:"key"`
	Unit       yaml.Node            `yaml:"unit"`
	Interval   yaml.Node            `yaml:"interval"`
	Intent     yaml.Node            `yaml:"intent"`
	Policies   yaml.Node            `yaml:"policies"`
	Params     map[string]yaml.Node `yaml:",inline"`
}

// fileKeys are the keys of a policy file beyond the parameters: the
// names of yamlPolicy's fields, in their order.
var fileKeys = yamlKeys(reflect.TypeFor[yamlPolicy]())

// yamlKeys returns the keys the fields of the struct type t are read
// from, leaving out inlined ones.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name != "" {
			keys = append(keys, name)
		}
	}
	return keys
}

var unknownFieldRE = regexp.MustCompile(`^line (\d+): field (.+) not found in type \S+$`)

// ReadFile reads the policy file at path.
func ReadFile(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, errorf("%s: policy file larger than %d bytes", path, MaxFileBytes)
	}
	return parseFile(path, data)
}

// parseFile parses the policy file data, read from path.
func parseFile(path string, data []byte) (*File, error) {
	var doc yamlPolicy
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &File{Path: path}, nil
		}
		return nil, yamlError(path, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errorf("%s:%d: a policy file holds one YAML document", path, extra.Line)
	}
	pf := &File{Path: path, Algos: map[limiters.Algorithm]Params{}}
	var err error
	if pf.Shared, err = sharedParams(path, doc.Params); err != nil {
		return nil, err
	}
	if err := pf.Shared.check(); err != nil {
		return nil, err
	}
	if err := pf.readLists(&doc); err != nil {
		return nil, err
	}
	if len(pf.Policies) > 0 && len(pf.Limiters) > 0 {
		return nil, errorf("%s:%d: a file gives either limiters: (lanes replayed side by side) or policies: (a stack that applies together), not both", path, doc.Limiters.Line)
	}
	if doc.Algorithms.Kind == 0 {
		return pf, nil
	}
	if doc.Algorithms.Kind != yaml.MappingNode {
		return nil, errorf("%s:%d: algorithms must map algorithm names to parameters", path, doc.Algorithms.Line)
	}
	content := doc.Algorithms.Content
	for i := 0; i+1 < len(content); i += 2 {
		name, body := content[i], content[i+1]
		a, err := limiters.ParseAlgorithm(name.Value)
		if err != nil {
			return nil, errorf("%s:%d: unknown algorithm %q (valid: %s)", path, name.Line, name.Value, AlgorithmNames())
		}
		if _, dup := pf.Algos[a]; dup {
			return nil, errorf("%s:%d: algorithm %s given twice", path, name.Line, a)
		}
		if pf.Algos[a], err = mappingParams(path, body); err != nil {
			return nil, err
		}
		if err := pf.Algos[a].check(); err != nil {
			return nil, err
		}
	}
	return pf, nil
}

// at is the source of a value on line of the file.
func (pf *File) at(line int) Source { return Source(fmt.Sprintf("%s:%d", pf.Path, line)) }

// list returns the values of n, a sequence of scalars or one scalar of
// comma-separated values.
func list(path, name string, n *yaml.Node) ([]string, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		return strings.Split(n.Value, ","), nil
	case yaml.SequenceNode:
		var out []string
		for _, v := range n.Content {
			if v.Kind != yaml.ScalarNode {
				return nil, errorf("%s:%d: %s must list names", path, v.Line, name)
			}
			out = append(out, v.Value)
		}
		return out, nil
	}
	return nil, errorf("%s:%d: %s must list names", path, n.Line, name)
}

// readLists reads the keys of a policy file beyond the parameters.
func (pf *File) readLists(doc *yamlPolicy) error {
	path := pf.Path
	if n := &doc.Algos; n.Kind != 0 {
		names, err := list(path, "algos", n)
		if err != nil {
			return err
		}
		algos, err := ParseAlgorithms(names, "algos")
		if err != nil {
			return errorf("%s:%d: %s", path, n.Line, Text(err))
		}
		pf.AlgoList = algos
	}
	if n := &doc.Key; n.Kind != 0 {
		keys, err := list(path, "key", n)
		if err != nil {
			return err
		}
		pf.Key = keys
	}
	for _, f := range []struct {
		name string
		n    *yaml.Node
		val  *Setting
	}{{"unit", &doc.Unit, nil}, {"interval", &doc.Interval, &pf.Interval}, {"intent", &doc.Intent, &pf.Intent}} {
		if f.n.Kind == 0 {
			continue
		}
		if f.n.Kind != yaml.ScalarNode || f.n.Value == "" {
			return errorf("%s:%d: %s must be a single value", path, f.n.Line, f.name)
		}
		if f.val == nil {
			pf.Unit = f.n.Value
			continue
		}
		*f.val = Setting{Value: f.n.Value, At: pf.at(f.n.Line)}
	}
	if pf.Intent.Value != "" {
		if _, _, err := parseIntent(pf.Intent); err != nil {
			return err
		}
	}
	if err := pf.readPolicies(&doc.Policies); err != nil {
		return err
	}
	n := &doc.Limiters
	if n.Kind == 0 {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return errorf("%s:%d: limiters must be a list of {%s, parameters...}", path, n.Line, strings.Join(entryKeys(false), ", "))
	}
	for _, item := range n.Content {
		if item.Kind != yaml.MappingNode {
			return errorf("%s:%d: a limiter must be a mapping of %s and parameters", path, item.Line, strings.Join(entryKeys(false), ", "))
		}
		sp, err := pf.readLimiter(item, false)
		if err != nil {
			return err
		}
		pf.Limiters = append(pf.Limiters, sp.Limiter)
	}
	return nil
}

// limiterKeys are the keys of an entry of limiters: beside its
// parameters; a policy of a stack takes policyKeys too.
var limiterKeys = []string{"name", "algorithm"}

// policyKeys are the keys a policy of a stack takes beyond a limiter's.
var policyKeys = []string{"key", "shadow"}

// entryKeys are the keys of an entry of limiters: or, with stack, of
// policies:, beside its parameters, as "(valid: ...)" lists name them.
func entryKeys(stack bool) []string {
	if stack {
		return slices.Concat(limiterKeys, policyKeys)
	}
	return limiterKeys
}

// readLimiter reads one entry of limiters: or, with stack, of policies:
// its name, algorithm (or preset) and parameters, and in a stack its key
// and shadow.
func (pf *File) readLimiter(item *yaml.Node, stack bool) (StackPolicy, error) {
	path := pf.Path
	at := pf.at(item.Line)
	sp := StackPolicy{Limiter: Limiter{At: at}}
	var algo string
	var params [][2]*yaml.Node
	extra := strings.Join(entryKeys(stack), ", ")
	for i := 0; i+1 < len(item.Content); i += 2 {
		k, v := item.Content[i], item.Content[i+1]
		if stack {
			switch k.Value {
			case policyKeys[0]:
				if v.Kind == yaml.SequenceNode && len(v.Content) == 0 {
					sp.Key = []string{}
					continue
				}
				keys, err := list(path, "key", v)
				if err != nil {
					return sp, err
				}
				for _, key := range keys {
					if strings.TrimSpace(key) == "" {
						return sp, errorf("%s:%d: key has an empty attribute name", path, v.Line)
					}
				}
				sp.Key = keys
				continue
			case policyKeys[1]:
				var b bool
				if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
					return sp, errorf("%s:%d: shadow must be true or false", path, v.Line)
				}
				sp.Shadow = b
				continue
			}
		}
		if v.Kind != yaml.ScalarNode || v.Value == "" {
			return sp, errorf("%s:%d: %s must be a single value", path, v.Line, k.Value)
		}
		switch k.Value {
		case limiterKeys[0]:
			sp.Name = v.Value
		case limiterKeys[1]:
			algo = v.Value
		default:
			params = append(params, [2]*yaml.Node{k, v})
		}
	}
	if preset, ok := presets.Lookup(algo); ok {
		var kvs [][2]string
		var args []string
		for _, kv := range params {
			k, v := kv[0], kv[1]
			if !slices.Contains(preset.ParamNames(), k.Value) {
				return sp, errorf("%s:%d: unknown key %q (valid: %s, %s)", path, k.Line, k.Value, extra, strings.Join(preset.ParamNames(), ", "))
			}
			kvs = append(kvs, [2]string{k.Value, v.Value})
			args = append(args, k.Value+"="+v.Value)
		}
		if err := sp.setPreset(preset, kvs); err != nil {
			return sp, errorf("%s: %s", at, Text(err))
		}
		sp.Args = strings.Join(args, ",")
		return sp, nil
	}
	a, err := limiters.ParseAlgorithm(algo)
	if err != nil {
		what := "a limiter"
		if stack {
			what = "policy " + sp.Name
		}
		return sp, errorf("%s: %s needs an algorithm (valid: %s; presets: %s), got %q", at, what, AlgorithmNames(), strings.Join(presets.Names(), ", "), algo)
	}
	sp.Algorithm = a
	var args []string
	for _, kv := range params {
		k, v := kv[0], kv[1]
		if !slices.Contains(ParamNames(), k.Value) {
			return sp, errorf("%s:%d: unknown key %q (valid: %s, %s)", path, k.Line, k.Value, extra, strings.Join(ParamNames(), ", "))
		}
		args = append(args, k.Value+"="+v.Value)
		if err := sp.Set(k.Value, v.Value, pf.at(v.Line)); err != nil {
			return sp, errorf("%s:%d: %s", path, k.Line, Text(err))
		}
	}
	sp.Args = strings.Join(args, ",")
	if err := sp.Params.check(); err != nil {
		return sp, err
	}
	return sp, nil
}

// readPolicies reads a stack of policies: a list of mappings with a name,
// an algorithm (or a preset) and its parameters, a key (a list of trace
// attributes; [] for one global limit) and shadow.
func (pf *File) readPolicies(n *yaml.Node) error {
	path := pf.Path
	if n.Kind == 0 {
		return nil
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return errorf("%s:%d: policies must be a list of {%s, parameters...}", path, n.Line, strings.Join(entryKeys(true), ", "))
	}
	names := map[string]bool{}
	for _, item := range n.Content {
		if item.Kind != yaml.MappingNode {
			return errorf("%s:%d: a policy must be a mapping of %s and parameters", path, item.Line, strings.Join(entryKeys(true), ", "))
		}
		sp, err := pf.readLimiter(item, true)
		if err != nil {
			return err
		}
		at := pf.at(item.Line)
		if sp.Name == "" {
			return errorf("%s: a policy needs a name", at)
		}
		if names[sp.Name] {
			return errorf("%s: two policies are named %s", at, sp.Name)
		}
		names[sp.Name] = true
		pf.Policies = append(pf.Policies, sp)
	}
	return nil
}

// yamlError turns a YAML decoding error into an *Error naming the file
// and line.
func yamlError(path string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := te.Errors[0]
		if m := unknownFieldRE.FindStringSubmatch(msg); m != nil {
			return errorf("%s:%s: unknown key %q (valid: %s)", path, m[1], m[2], strings.Join(append(ParamNames(), fileKeys...), ", "))
		}
		if rest, ok := strings.CutPrefix(msg, "line "); ok {
			return errorf("%s:%s", path, rest)
		}
		return errorf("%s: %s", path, msg)
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		return errorf("%s:%s", path, rest)
	}
	return errorf("%s: %s", path, msg)
}

// sharedParams reads the parameters of a policy file's top level, m:
// every key that is not one of fileKeys.
func sharedParams(path string, m map[string]yaml.Node) (Params, error) {
	names := slices.Sorted(maps.Keys(m))
	slices.SortStableFunc(names, func(a, b string) int { return m[a].Line - m[b].Line })
	p := Params{}
	for _, name := range names {
		n := m[name]
		if !slices.Contains(ParamNames(), name) {
			return nil, errorf("%s:%d: unknown key %q (valid: %s)", path, n.Line, name, strings.Join(append(ParamNames(), fileKeys...), ", "))
		}
		if err := p.setNode(path, name, &n); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// mappingParams reads the parameters of one algorithm in a policy file.
func mappingParams(path string, n *yaml.Node) (Params, error) {
	if n.Kind != yaml.MappingNode {
		return nil, errorf("%s:%d: an algorithm's parameters must be a mapping", path, n.Line)
	}
	p := Params{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(ParamNames(), k.Value) {
			return nil, errorf("%s:%d: unknown key %q (valid: %s)", path, k.Line, k.Value, strings.Join(ParamNames(), ", "))
		}
		if _, dup := p[k.Value]; dup {
			return nil, errorf("%s:%d: %s given twice", path, k.Line, k.Value)
		}
		if err := p.setNode(path, k.Value, v); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// setNode sets parameter name to the text of n, which must be one scalar;
// numbers keep their exact text.
func (p Params) setNode(path, name string, n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.Value == "" {
		return errorf("%s:%d: %s must be a single value", path, n.Line, name)
	}
	p[name] = Setting{Value: n.Value, At: Source(fmt.Sprintf("%s:%d", path, n.Line))}
	return nil
}
