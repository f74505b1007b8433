package sim

import (
	"testing"
	"time"
)

// TestClientFlags: the flags give the client model; a retry flag without
// --clients, and a backoff whose MAX is below BASE, are usage errors.
func TestClientFlags(t *testing.T) {
	f := ClientFlags{Model: "backoff", MaxRetries: 2, Delay: "0.1s", Backoff: "1s,30s", Jitter: true, Seed: 7}
	c, err := f.Clients(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != ClientsBackoff || c.Base != time.Second || c.Max != 30*time.Second || c.RetryDelay != 100*time.Millisecond || !c.Jitter || c.Seed != 7 {
		t.Errorf("Clients = %+v", c)
	}
	for _, tc := range []struct {
		flags ClientFlags
		given map[string]bool
		want  string
	}{
		{ClientFlags{Model: "none"}, map[string]bool{"jitter": true}, "--jitter needs --clients honour, immediate or backoff"},
		{ClientFlags{Model: "retry"}, nil, `invalid --clients "retry" (valid: ` + ClientModels.String() + `)`},
		{ClientFlags{Model: "backoff", Delay: "0", Backoff: "2s,1s"}, nil, `invalid --backoff "2s,1s": MAX is below BASE`},
	} {
		_, err := tc.flags.Clients(tc.given)
		fe, ok := err.(*FlagError)
		if !ok || err.Error() != tc.want || !fe.Usage() {
			t.Errorf("%+v: Clients = %v, want the usage error %q", tc.flags, err, tc.want)
		}
	}
}

// TestParseShard: --shard I/N is shard I of N, I from 0 to N-1.
func TestParseShard(t *testing.T) {
	if sh, err := ParseShard(" 1 / 4 "); err != nil || sh != (Shard{Index: 1, Count: 4}) {
		t.Errorf("ParseShard(1/4) = %+v, %v", sh, err)
	}
	for _, bad := range []string{"", "1", "a/4", "0/0", "4/4", "-1/4"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) took it", bad)
		}
	}
}
