package storereplay

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/limiters/redisstore"
)

// TestFlagsConfig: the flags' defaults give a replay of one worker
// routed by key that stops at a failure; a bad value is a usage error
// naming its flag.
func TestFlagsConfig(t *testing.T) {
	var f Flags
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse([]string{"--store", "redis://127.0.0.1:6379/0", "--route", "spread", "--on-failure", "closed"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Workers != 1 || cfg.Pipeline != 64 || cfg.Route != RouteSpread || cfg.Failure != redisstore.FailClosed || cfg.ConnectTimeout <= 0 {
		t.Errorf("Config = %+v", cfg)
	}
	for _, tc := range []struct {
		change func(*Flags)
		want   string
	}{
		{func(f *Flags) { f.Store = "" }, "replay needs --store URL: redis://HOST:PORT/DB, redis+cluster://HOST:PORT,..., redis+sentinel://HOST:PORT,.../MASTER or unix:///PATH"},
		{func(f *Flags) { f.Workers = 0 }, "--workers must be from 1 to 1024, got 0"},
		{func(f *Flags) { f.Route = "random" }, `invalid --route "random" (valid: key, spread)`},
		{func(f *Flags) { f.Naive = true }, "--on-failure closed applies to the atomic store: --naive stops at the first error"},
		{func(f *Flags) { f.Prefix = "a{b}" }, `--prefix "a{b}" holds a brace: Redis Cluster reads braces as the key's hash tag`},
		{func(f *Flags) { f.Resume = true }, "--resume continues the state under a --prefix: give the prefix of the run to resume"},
	} {
		g := f
		tc.change(&g)
		_, err := g.Config()
		fe, ok := err.(*FlagError)
		if !ok || err.Error() != tc.want || !fe.Usage() {
			t.Errorf("Config = %v, want the usage error %q", err, tc.want)
		}
	}
}
