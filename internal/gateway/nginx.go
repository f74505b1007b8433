package gateway

import (
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/ratesim/ratesim/internal/spec"
	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
)

// A directive is one nginx directive: its name and arguments, the line it
// starts on, and its block, if it has one.
type directive struct {
	name  string
	args  []string
	line  int
	block []directive
	// hasBlock reports whether it ends with a block rather than ';'.
	hasBlock bool
}

// parseNginx parses nginx's config syntax: directives of words ended by
// ';' or a block in braces, '#' comments, quoted words with backslash
// escapes.
func (r *reader) parseNginx(data []byte) ([]directive, error) {
	src := string(data)
	line, i := 1, 0
	type frame struct {
		dirs []directive
		open directive
	}
	var stack []frame
	var cur []directive
	var words []string
	wordLine := 0
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == ';':
			if len(words) == 0 {
				return nil, r.errorf(line, "unexpected \";\"")
			}
			cur = append(cur, directive{name: words[0], args: words[1:], line: wordLine})
			words = nil
			i++
		case c == '{':
			if len(words) == 0 {
				return nil, r.errorf(line, "unexpected \"{\"")
			}
			stack = append(stack, frame{dirs: cur, open: directive{name: words[0], args: words[1:], line: wordLine, hasBlock: true}})
			cur, words = nil, nil
			i++
		case c == '}':
			if len(words) > 0 {
				return nil, r.errorf(line, "directive %q is not terminated by \";\"", words[0])
			}
			if len(stack) == 0 {
				return nil, r.errorf(line, "unexpected \"}\"")
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			top.open.block = cur
			cur = append(top.dirs, top.open)
			i++
		default:
			if len(words) == 0 {
				wordLine = line
			}
			var w strings.Builder
			if c == '"' || c == '\'' {
				q := c
				i++
				start := line
				for {
					if i >= len(src) {
						return nil, r.errorf(start, "unterminated quoted string")
					}
					if src[i] == '\\' && i+1 < len(src) {
						w.WriteByte(src[i+1])
						i += 2
						continue
					}
					if src[i] == q {
						i++
						break
					}
					if src[i] == '\n' {
						line++
					}
					w.WriteByte(src[i])
					i++
				}
			} else {
				for i < len(src) && !strings.ContainsRune(" \t\r\n;{}#", rune(src[i])) {
					w.WriteByte(src[i])
					i++
				}
			}
			words = append(words, w.String())
		}
	}
	if len(words) > 0 {
		return nil, r.errorf(wordLine, "directive %q is not terminated by \";\"", words[0])
	}
	if len(stack) > 0 {
		return nil, r.errorf(stack[len(stack)-1].open.line, "%q block is not closed by \"}\"", stack[len(stack)-1].open.name)
	}
	return cur, nil
}

// A zone is an nginx limit_req_zone.
type zone struct {
	name   string
	key    string   // the key as written
	fields []string // the trace fields it keys on
	rate   string
	bytes  int64 // the zone's size
	line   int
	used   bool
}

// A limitReq is one limit_req directive in effect somewhere.
type limitReq struct {
	zone    string
	burst   string
	nodelay bool
	delay   string
	dryRun  bool
	line    int
}

// same reports whether l and m are the same limit.
func (l limitReq) same(m limitReq) bool {
	return l.zone == m.zone && l.burst == m.burst && l.nodelay == m.nodelay && l.delay == m.delay && l.dryRun == m.dryRun
}

// A location is one location block with the limits in effect in it; the
// server level is the location with kind "".
type location struct {
	kind   string // "=", "^~" or "" (a prefix)
	path   string
	line   int
	limits []limitReq
	server bool // the requests no location takes
}

var nginxVarRE = regexp.MustCompile(`\$\{?([A-Za-z0-9_]+)\}?`)

// nginx reads an nginx config: the http block, or the contents of one (a
// conf.d file).
func (r *reader) nginx(data []byte) error {
	dirs, err := r.parseNginx(data)
	if err != nil {
		return err
	}
	r.cfg.File.Stack = "refund" // a request refused by one zone is accounted in none
	for _, d := range dirs {
		if d.name == "http" {
			dirs = d.block
			break
		}
	}
	zones := map[string]*zone{}
	var order []string
	for _, d := range dirs {
		if d.name == "limit_req_zone" {
			z, err := r.nginxZone(d)
			if err != nil {
				return err
			}
			if _, dup := zones[z.name]; dup {
				return r.errorf(d.line, "zone %q is defined twice", z.name)
			}
			zones[z.name] = z
			order = append(order, z.name)
		}
	}
	httpLimits, httpDry, err := r.nginxLevel(dirs, nil, false)
	if err != nil {
		return err
	}
	var servers []directive
	for _, d := range dirs {
		switch d.name {
		case "server":
			servers = append(servers, d)
		case "include":
			r.warnf(d.line, "include %s is not followed: limits in it are not read", strings.Join(d.args, " "))
		}
	}
	var locs []location
	withLimits := 0
	if len(servers) == 0 {
		// A server's snippet (a conf.d file of locations), or limits of
		// the http level alone.
		sl, err := r.nginxServer(directive{name: "server", block: dirs, line: 1}, nil, false)
		if err != nil {
			return err
		}
		locs = sl
	}
	for _, s := range servers {
		sl, err := r.nginxServer(s, httpLimits, httpDry)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(sl, func(l location) bool { return len(l.limits) > 0 }) {
			withLimits++
			locs = sl
		}
	}
	if withLimits > 1 {
		return r.errorf(servers[0].line, "several server blocks have limits: ratesim does not route requests by server_name; give one server's config")
	}
	// One policy per zone: nginx keeps one state per key in a zone,
	// whichever location counted it.
	type use struct {
		lim  limitReq
		locs []int
	}
	uses := map[string]*use{}
	for i, l := range locs {
		for _, lim := range l.limits {
			z, ok := zones[lim.zone]
			if !ok {
				return r.errorf(lim.line, "limit_req zone=%s: no limit_req_zone defines it", lim.zone)
			}
			z.used = true
			u := uses[lim.zone]
			if u == nil {
				uses[lim.zone] = &use{lim: lim, locs: []int{i}}
				continue
			}
			if !u.lim.same(lim) {
				return r.errorf(lim.line, "zone %s is used at line %d and here with other burst, delay or dry run: nginx shares one state per key between them, which ratesim cannot replay", lim.zone, u.lim.line)
			}
			if !slices.Contains(u.locs, i) {
				u.locs = append(u.locs, i)
			}
		}
	}
	for _, name := range order {
		z := zones[name]
		if !z.used {
			r.warnf(z.line, "zone %s is defined but no limit_req uses it", name)
			continue
		}
		u := uses[name]
		if err := r.nginxPolicy(z, u.lim, locs, u.locs); err != nil {
			return err
		}
		r.cfg.zones = append(r.cfg.zones, *z)
	}
	return nil
}

// nginxLevel reads the limit_req directives of one level (http, server or
// location): its own, or when it has none those of the level above, as
// nginx inherits them; and whether dry run is on.
func (r *reader) nginxLevel(dirs []directive, above []limitReq, aboveDry bool) ([]limitReq, bool, error) {
	dry := aboveDry
	var own []limitReq
	for _, d := range dirs {
		switch d.name {
		case "limit_req_dry_run":
			if len(d.args) != 1 || d.args[0] != "on" && d.args[0] != "off" {
				return nil, false, r.errorf(d.line, "limit_req_dry_run takes on or off")
			}
			dry = d.args[0] == "on"
		case "limit_req_status":
			if len(d.args) != 1 {
				return nil, false, r.errorf(d.line, "limit_req_status takes one status code")
			}
			if n, err := strconv.Atoi(d.args[0]); err != nil || n < 400 || n > 599 {
				return nil, false, r.errorf(d.line, "limit_req_status %q: want a code between 400 and 599", d.args[0])
			}
		case "limit_req":
			lim := limitReq{line: d.line}
			for _, a := range d.args {
				k, v, _ := strings.Cut(a, "=")
				switch k {
				case "zone":
					lim.zone = v
				case "burst":
					lim.burst = v
				case "delay":
					lim.delay = v
				case "nodelay":
					lim.nodelay = true
				default:
					return nil, false, r.errorf(d.line, "limit_req: unknown parameter %q (valid: zone=NAME, burst=N, nodelay, delay=N)", a)
				}
			}
			if lim.zone == "" {
				return nil, false, r.errorf(d.line, "limit_req needs zone=NAME")
			}
			own = append(own, lim)
		}
	}
	limits := above
	if len(own) > 0 {
		limits = own
	}
	out := make([]limitReq, len(limits))
	for i, l := range limits {
		l.dryRun = dry
		out[i] = l
	}
	return out, dry, nil
}

// nginxServer reads a server block's locations, with the limits in effect
// in each.
func (r *reader) nginxServer(s directive, httpLimits []limitReq, httpDry bool) ([]location, error) {
	limits, dry, err := r.nginxLevel(s.block, httpLimits, httpDry)
	if err != nil {
		return nil, err
	}
	locs := []location{{server: true, limits: limits, line: s.line}}
	for _, d := range s.block {
		if d.name != "location" {
			continue
		}
		l := location{line: d.line}
		switch {
		case len(d.args) == 2 && (d.args[0] == "=" || d.args[0] == "^~"):
			l.kind, l.path = d.args[0], d.args[1]
		case len(d.args) == 2 && (d.args[0] == "~" || d.args[0] == "~*"):
			return nil, r.errorf(d.line, "regular expression locations (%s) are not supported: nginx tries them before the longest prefix; ratesim matches = and prefix locations", d.args[0])
		case len(d.args) == 1 && strings.HasPrefix(d.args[0], "@"):
			continue // named locations take no request by its path
		case len(d.args) == 1:
			l.path = d.args[0]
			if strings.HasPrefix(l.path, "=") || strings.HasPrefix(l.path, "~") {
				return nil, r.errorf(d.line, "location %s: write the modifier apart from the path, as nginx documents it", l.path)
			}
		default:
			return nil, r.errorf(d.line, "location takes [=|^~] PATH")
		}
		for _, in := range d.block {
			if in.name == "location" {
				return nil, r.errorf(in.line, "nested locations are not supported")
			}
		}
		if l.limits, _, err = r.nginxLevel(d.block, limits, dry); err != nil {
			return nil, err
		}
		for _, o := range locs[1:] {
			if o.kind == l.kind && o.path == l.path || o.kind != "=" && l.kind != "=" && o.path == l.path {
				return nil, r.errorf(d.line, "duplicate location %q (also at line %d)", l.path, o.line)
			}
		}
		locs = append(locs, l)
	}
	return locs, nil
}

// nginxZone reads a limit_req_zone directive.
func (r *reader) nginxZone(d directive) (*zone, error) {
	if len(d.args) < 3 {
		return nil, r.errorf(d.line, "limit_req_zone takes KEY zone=NAME:SIZE rate=RATE")
	}
	z := &zone{key: d.args[0], line: d.line}
	for _, a := range d.args[1:] {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "zone":
			name, size, ok := strings.Cut(v, ":")
			if !ok || name == "" {
				return nil, r.errorf(d.line, "zone=%s: want zone=NAME:SIZE, such as zone=one:10m", v)
			}
			b, err := nginxSize(size)
			if err != nil {
				return nil, r.errorf(d.line, "zone=%s: %v", v, err)
			}
			z.name, z.bytes = name, b
		case "rate":
			z.rate = v
		case "sync":
		default:
			return nil, r.errorf(d.line, "limit_req_zone: unknown parameter %q (valid: zone=NAME:SIZE, rate=RATE, sync)", a)
		}
	}
	if z.name == "" || z.rate == "" {
		return nil, r.errorf(d.line, "limit_req_zone needs zone=NAME:SIZE and rate=RATE")
	}
	rest := nginxVarRE.ReplaceAllString(z.key, "")
	for _, m := range nginxVarRE.FindAllStringSubmatch(z.key, -1) {
		v := "$" + m[1]
		if _, mapped := r.opt.Fields[v]; !mapped && (v == "$server_name" || v == "$server_port" || v == "$scheme") {
			// The same for every request of one server block.
			r.warnf(d.line, "%s is the same for every request of a server: zone %s counts its server's requests together", v, z.name)
			continue
		}
		f, ok := r.field(v)
		if !ok {
			return nil, r.errorf(d.line, "limit_req_zone key %s: no trace field is known for it; map it with --policy-map '%s=FIELD'", v, v)
		}
		z.fields = append(z.fields, f)
	}
	if len(z.fields) == 0 {
		r.warnf(d.line, "zone %s keys on the constant %q: every client shares one limit", z.name, z.key)
	} else if rest != "" {
		r.warnf(d.line, "zone %s's key %q has text beside its variables, which is the same for every request: keyed on %s", z.name, z.key, strings.Join(z.fields, ", "))
	}
	return z, nil
}

// nginxSize parses a size: bytes, or k or m.
func nginxSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "m"), strings.HasSuffix(s, "M"):
		mult, s = 1<<20, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > 1<<40/mult {
		return 0, fmt.Errorf("want a size such as 10m or 512k")
	}
	return n * mult, nil
}

// nginxPolicy adds the policy of zone z limited by lim in the locations
// in of locs.
func (r *reader) nginxPolicy(z *zone, lim limitReq, locs []location, in []int) error {
	kvs := [][2]string{{"rate", z.rate}}
	if lim.burst != "" {
		kvs = append(kvs, [2]string{"burst", lim.burst})
	}
	if lim.nodelay {
		kvs = append(kvs, [2]string{"nodelay", ""})
	}
	if lim.delay != "" {
		kvs = append(kvs, [2]string{"delay", lim.delay})
	}
	// The preset checks the parameters as nginx does; the policy is its
	// queue as a textbook kind, which a stack replays key by key.
	if _, err := r.preset(lim.line, "nginx", kvs); err != nil {
		return err
	}
	l, err := r.nginxQueue(z, lim)
	if err != nil {
		return err
	}
	l.Name = z.name
	sp := spec.StackPolicy{Limiter: l, Key: z.fields, Shadow: lim.dryRun}
	if sp.Key == nil {
		sp.Key = []string{}
	}
	var loc *sim.Match
	if len(in) < len(locs) {
		loc = locationMatch(locs, in)
	}
	sp.Match = loc
	if len(z.fields) > 0 {
		// "Requests with an empty key value are not accounted"
		// (ngx_http_limit_req_module): a missing header limits nothing.
		keyed := &sim.Match{Fields: z.fields, Applies: func(values [][]byte) bool {
			for _, v := range values {
				if len(v) > 0 {
					return true
				}
			}
			return false
		}}
		sp.Match, sp.EmptyKeyOnly = both(keyed, loc), loc == nil
	}
	r.add(sp)
	r.nginxLint(z, lim)
	return nil
}

// nginxQueue is the limiter of zone z under lim: nginx's leaky queue in
// whole milliseconds and thousandths of a request, its rate in whole
// thousandths per second, a time up to 60 s back taken as no time passing.
// nginx keeps a zone's keys in one shared memory, where a new key may
// expire others' states; a stack decides each key alone, so that is not
// replayed (lint with a trace says when the zone is too small).
func (r *reader) nginxQueue(z *zone, lim limitReq) (spec.Limiter, error) {
	rate := z.rate
	if _, err := strconv.ParseInt(rate, 10, 64); err == nil {
		rate += "r/s" // a bare number is per second
	}
	milli := nginxMilli(rate)
	if milli <= 0 {
		return spec.Limiter{}, r.errorf(z.line, "rate=%s: want N r/s or N r/m, at least 1/1000 r/s as nginx keeps it", z.rate)
	}
	burst := int64(0)
	if lim.burst != "" {
		burst, _ = strconv.ParseInt(lim.burst, 10, 64)
	}
	delay := int64(0)
	if lim.delay != "" {
		delay, _ = strconv.ParseInt(lim.delay, 10, 64)
	}
	if lim.nodelay {
		delay = burst
	}
	at := r.at(lim.line)
	l := spec.Limiter{Algorithm: limiters.TickQueue, At: at,
		Args: fmt.Sprintf("rate=%s,burst=%d,delay=%d", z.rate, burst, min(delay, burst))}
	for _, kv := range [][2]string{
		{"capacity", strconv.FormatInt(burst+1, 10)}, {"rate", fmt.Sprintf("%d/1000s", milli)},
		{"tick", "1ms"}, {"parts", "1000"}, {"delay", strconv.FormatInt(min(delay, burst), 10)}, {"clock", "clamp"},
	} {
		if err := l.Set(kv[0], kv[1], at); err != nil {
			return l, r.errorf(lim.line, "%s", spec.Text(err))
		}
	}
	return l, l.Check()
}

// nginxLint warns of what a zone's rate and burst do that may not be
// meant.
func (r *reader) nginxLint(z *zone, lim limitReq) {
	if n, ok := strings.CutSuffix(z.rate, "r/m"); ok {
		if v, err := strconv.ParseInt(n, 10, 64); err == nil && v*1000%60 != 0 {
			milli := v * 1000 / 60
			r.warnf(z.line, "rate=%s is kept in whole thousandths of a request per second: %d/1000 r/s, one request per %s s, not %s s",
				z.rate, milli, big.NewRat(1000, milli).FloatString(3), big.NewRat(60, v).FloatString(3))
		}
	}
	burst, err := strconv.ParseInt(lim.burst, 10, 64)
	if lim.burst == "" || err != nil || burst == 0 || lim.nodelay {
		return
	}
	delay := int64(0)
	if lim.delay != "" {
		delay, _ = strconv.ParseInt(lim.delay, 10, 64)
	}
	if delay >= burst {
		return
	}
	rate := nginxMilli(z.rate)
	if rate <= 0 {
		return
	}
	// The last of the queue waits until the queue ahead of it drains to
	// the delay: (burst - delay) / rate.
	wait := big.NewRat((burst-delay)*1000, rate)
	r.warnf(lim.line, "burst=%d without nodelay delays the queued requests: up to %s s of added latency ((burst - delay) / rate)", burst, wait.FloatString(3))
}

// nginxMilli is an nginx rate in thousandths of a request per second, 0
// when it is not one.
func nginxMilli(rate string) int64 {
	scale := int64(1)
	n, ok := strings.CutSuffix(rate, "r/s")
	if !ok {
		if n, ok = strings.CutSuffix(rate, "r/m"); !ok {
			return 0
		}
		scale = 60
	}
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil || v <= 0 || v > 1<<40 {
		return 0
	}
	return v * 1000 / scale
}

// locationMatch is the match of the requests whose path nginx gives to
// one of locs[in]: an exact (=) location its path equal; else the longest
// prefix location; else the server's level.
func locationMatch(locs []location, in []int) *sim.Match {
	chosen := make([]bool, len(locs))
	for _, i := range in {
		chosen[i] = true
	}
	return &sim.Match{Fields: []string{"path"}, Applies: func(values [][]byte) bool {
		return chosen[selectLocation(locs, values[0])]
	}}
}

// selectLocation returns the location nginx gives path to, the query
// string left out.
func selectLocation(locs []location, path []byte) int {
	if q := slices.Index(path, '?'); q >= 0 {
		path = path[:q]
	}
	best, bestLen := 0, -1
	for i, l := range locs {
		if l.server {
			continue
		}
		if l.kind == "=" {
			if string(path) == l.path {
				return i
			}
			continue
		}
		if len(l.path) > bestLen && len(path) >= len(l.path) && string(path[:len(l.path)]) == l.path {
			best, bestLen = i, len(l.path)
		}
	}
	if bestLen < 0 {
		for i, l := range locs {
			if l.server {
				return i
			}
		}
	}
	return best
}

// both returns the match of the requests a and b (nil for every request)
// both take.
func both(a, b *sim.Match) *sim.Match {
	if b == nil {
		return a
	}
	n := len(a.Fields)
	return &sim.Match{Fields: append(append([]string(nil), a.Fields...), b.Fields...), Applies: func(values [][]byte) bool {
		return a.Applies(values[:n]) && b.Applies(values[n:])
	}}
}
