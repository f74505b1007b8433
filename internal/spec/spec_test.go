package spec

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratesim/ratesim/limiters"
)

// bind resolves in and binds it to seconds.
func bind(t *testing.T, in Inputs) *Spec {
	t.Helper()
	pl, err := Resolve(in)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	sp, err := pl.Bind(time.Second)
	if err != nil {
		t.Fatalf("Bind: %v", err)
	}
	return sp
}

func mustLimiter(t *testing.T, s string) Limiter {
	t.Helper()
	l, err := ParseLimiter(s)
	if err != nil {
		t.Fatalf("ParseLimiter(%q): %v", s, err)
	}
	return l
}

// TestIntentNamed checks when a replay has an intent somebody meant.
func TestIntentNamed(t *testing.T) {
	flags := func(kv ...string) Params {
		p := Params{}
		for i := 0; i+1 < len(kv); i += 2 {
			p[kv[i]] = Setting{Value: kv[i+1], At: Source("--" + kv[i])}
		}
		return p
	}
	tests := []struct {
		name  string
		in    Inputs
		named bool
		from  Source
		limit int64
	}{
		{"the classic five on the default policy", Inputs{}, true, Default, 3},
		{"--limit given", Inputs{Flags: flags("limit", "5")}, true, "--limit", 5},
		{"a bucket limiter with its own capacity and rate",
			Inputs{Limiters: []Limiter{mustLimiter(t, "tb=token-bucket:capacity=5,rate=1/1s")}}, false, Default, 3},
		{"a bucket limiter that takes the default rate",
			Inputs{Limiters: []Limiter{mustLimiter(t, "tb=token-bucket:capacity=5")}}, true, Default, 3},
		{"a preset", Inputs{Limiters: []Limiter{mustLimiter(t, "nginx:rate=10r/s,burst=20")}}, false, Default, 3},
		{"a preset with --intent", Inputs{Limiters: []Limiter{mustLimiter(t, "nginx:rate=10r/s")}, Intent: Setting{Value: "10/1s", At: "--intent"}},
			true, "--intent", 10},
		{"a window limiter with its own limit and window",
			Inputs{Limiters: []Limiter{mustLimiter(t, "fw=fixed-window:limit=6,window=1m")}}, false, Default, 3},
		{"the same, with --window", Inputs{Flags: flags("window", "1m"),
			Limiters: []Limiter{mustLimiter(t, "fw=fixed-window:limit=6,window=1m")}}, true, "--window", 3},
	}
	for _, tt := range tests {
		sp := bind(t, tt.in)
		if sp.IntentNamed != tt.named || sp.IntentFrom != tt.from || sp.Intent.Limit != tt.limit {
			t.Errorf("%s: intent named %v from %q, limit %d; want %v from %q, limit %d",
				tt.name, sp.IntentNamed, sp.IntentFrom, sp.Intent.Limit, tt.named, tt.from, tt.limit)
		}
	}
}

// TestPresetPolicy checks that a preset's lane has the preset's policy as
// a value: nothing is turned into text and read back.
func TestPresetPolicy(t *testing.T) {
	l := mustLimiter(t, "edge=nginx:rate=1r/m,burst=2")
	sp := bind(t, Inputs{Limiters: []Limiter{l}, Flags: Params{"clock": {Value: "reject", At: "--clock"}}})
	got := sp.Lanes[0]
	if got.Algorithm != l.Algorithm || got.Policy != l.Policy {
		t.Errorf("lane %+v, want the preset's %v %+v", got, l.Algorithm, l.Policy)
	}
	if got.Policy.Rate.N != 16 || got.Policy.Rate.Per != 1000*time.Second {
		t.Errorf("nginx 1r/m is 16 per 1000s, got %d per %v", got.Policy.Rate.N, got.Policy.Rate.Per)
	}
	if !sp.Own[0] {
		t.Errorf("a preset's lane has parameters of its own")
	}
}

// TestUnitFree checks that a duration that fits one unit and not another
// is refused only when bound to the other.
func TestUnitFree(t *testing.T) {
	pl, err := Resolve(Inputs{Flags: Params{"window": {Value: "1.5", At: "--window"}}})
	if err != nil {
		t.Fatalf("Resolve refused a window of 1.5: %v", err)
	}
	if sp, err := pl.Bind(time.Second); err != nil || sp.Intent.Window != 1500*time.Millisecond {
		t.Errorf("Bind(s) = %v, %v; want a window of 1.5s", sp, err)
	}
	_, err = pl.Bind(time.Nanosecond)
	var e *Error
	if !errors.As(err, &e) || e.Param != "window" || e.At != "--window" || !strings.Contains(e.Reason, "finer than a nanosecond") {
		t.Errorf("Bind(ns) = %v; want an *Error about --window finer than a nanosecond", err)
	}
	if _, err := Resolve(Inputs{Flags: Params{"window": {Value: "ten", At: "--window"}}}); err == nil {
		t.Errorf("Resolve took a window of ten")
	}
}

// TestFile checks a policy file's stack with a preset, and the refusal of
// limiters: and policies: together.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	pf, err := ReadFile(write("stack.yaml", `policies:
  - {name: edge, algorithm: nginx, rate: 10r/s, burst: 5, nodelay: true, key: [ip]}
  - {name: global, algorithm: fixed-window, limit: 100, window: 1m, key: []}
`))
	if err != nil {
		t.Fatalf("a stack with a preset: %v", err)
	}
	if len(pf.Policies) != 2 || pf.Policies[0].Preset != "nginx" || pf.Policies[0].Algorithm != limiters.NginxLimitReq ||
		pf.Policies[0].Key[0] != "ip" || pf.Policies[1].Key == nil || len(pf.Policies[1].Key) != 0 {
		t.Errorf("policies = %+v", pf.Policies)
	}
	_, err = ReadFile(write("both.yaml", `limiters:
  - {name: tb, algorithm: token-bucket, capacity: 5}
policies:
  - {name: global, algorithm: fixed-window, limit: 100, window: 1m, key: []}
`))
	if err == nil || !strings.Contains(err.Error(), "both.yaml:2: a file gives either limiters:") {
		t.Errorf("limiters: and policies: together: %v", err)
	}
	_, err = ReadFile(write("badpreset.yaml", `policies:
  - {name: edge, algorithm: nginx, rate: 10r/s, brust: 5}
`))
	if err == nil || !strings.Contains(err.Error(), `badpreset.yaml:2: unknown key "brust" (valid: name, algorithm, key, shadow, rate, burst, nodelay, delay, zone, key_bytes)`) {
		t.Errorf("a preset's unknown key: %v", err)
	}
	// The keys of the file itself follow the parameters.
	_, err = ReadFile(write("badkey.yaml", "limit: 3\nwindow: 10\nbogus: 1\n"))
	if err == nil || !strings.Contains(err.Error(), `badkey.yaml:3: unknown key "bogus" (valid: `+strings.Join(ParamNames(), ", ")+
		`, algorithms, limiters, algos, key, unit, interval, intent, policies)`) {
		t.Errorf("a file's unknown key: %v", err)
	}
}
