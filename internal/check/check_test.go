package check

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ratesim/ratesim/limiters"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// checkLog is a log of what a limiter did, $limit_req_status last. The
// model below, a fixed window of 2 per 10 s per address, allows lines
// 1, 2, 4, 5 and 7 and refuses 3 and 6.
const checkLog = `` +
	"10.0.0.1 1728561330.0 PASSED\n" + // allowed, passed
	"10.0.0.1 1728561331.0 PASSED\n" + // allowed, passed
	"10.0.0.1 1728561332.0 PASSED\n" + // refused, passed: a disagreement
	"10.0.0.2 1728561333.0 REJECTED\n" + // allowed, limited: a disagreement
	"10.0.0.2 1728561334.0 -\n" + // allowed, unobserved
	"10.0.0.1 1728561335.0 REJECTED_DRY_RUN\n" + // refused, limited
	"10.0.0.1 1728561341.0 DELAYED\n" // a new window: allowed, passed

// TestCheckCounts replays checkLog through a model and checks the
// confusion, the first disagreements and the keys against the counts by
// hand in the comments of checkLog.
func TestCheckCounts(t *testing.T) {
	r, err := traces.NewReader(strings.NewReader(checkLog), "access.log",
		traces.Options{Format: traces.Nginx, LogFormat: "$remote_addr $msec $limit_req_status"})
	if err != nil {
		t.Fatal(err)
	}
	obs, err := traces.ParseObserved("limit_req_status")
	if err != nil {
		t.Fatal(err)
	}
	policy := limiters.Policy{Limit: 2, Window: 10 * time.Second}
	cfg := sim.Config{Lanes: []sim.Lane{{Name: "fw", Algorithm: limiters.FixedWindow, Policy: policy}}, Policy: policy, DecisionsOnly: true}
	var each []int
	chk := Observe(&cfg, obs, Options{First: 1, Keys: 5, Each: func(d *Disagreement) error {
		each = append(each, d.Line)
		return nil
	}})
	if _, err := sim.Run(r, cfg, chk.Emit); err != nil {
		t.Fatal(err)
	}
	lanes := chk.Report()
	if len(lanes) != 1 {
		t.Fatalf("%d lanes", len(lanes))
	}
	l := lanes[0]
	got := []int64{l.Requests, l.Unobserved, l.Observed(), l.Agree(), l.AllowedPassed, l.AllowedLimited, l.RefusedPassed, l.RefusedLimited}
	want := []int64{7, 1, 6, 4, 3, 1, 1, 1}
	if !cmp.Equal(got, want) {
		t.Errorf("requests, unobserved, observed, agree, allowed&passed, allowed&limited, refused&passed, refused&limited = %v, want %v", got, want)
	}
	if diff := cmp.Diff([]Disagreement{{Lane: "fw", File: "access.log", Line: 3, User: "10.0.0.1", Key: "10.0.0.1", TimeText: "1728561332.0", Allowed: false}}, l.First); diff != "" {
		t.Errorf("first disagreements (-want +got):\n%s", diff)
	}
	if !cmp.Equal(each, []int{3, 4}) {
		t.Errorf("Each saw lines %v, want 3 and 4", each)
	}
	// Both keys disagree once; 10.0.0.1 has more observed requests (5
	// against 10.0.0.2's 1, its unobserved line left out).
	wantKeys := []KeyCount{
		{Key: "10.0.0.1", Requests: 5, Disagreements: 1, RefusedPassed: 1},
		{Key: "10.0.0.2", Requests: 1, Disagreements: 1, AllowedLimited: 1},
	}
	if diff := cmp.Diff(wantKeys, l.Keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
}

// TestCheckFileField: a disagreement names the trace's file even where
// the log has a field named "file".
func TestCheckFileField(t *testing.T) {
	trace := "user,timestamp,limit_req_status,file\n" +
		"u1,1,PASSED,x.txt\n" +
		"u1,2,PASSED,y.txt\n" // refused by the model: a disagreement
	r, err := traces.NewReader(strings.NewReader(trace), "trace.csv", traces.Options{})
	if err != nil {
		t.Fatal(err)
	}
	obs, err := traces.ParseObserved("limit_req_status")
	if err != nil {
		t.Fatal(err)
	}
	policy := limiters.Policy{Limit: 1, Window: 10 * time.Second}
	cfg := sim.Config{Lanes: []sim.Lane{{Name: "fw", Algorithm: limiters.FixedWindow, Policy: policy}}, Policy: policy, DecisionsOnly: true}
	chk := Observe(&cfg, obs, Options{First: 1})
	if _, err := sim.Run(r, cfg, chk.Emit); err != nil {
		t.Fatal(err)
	}
	l := chk.Report()[0]
	if len(l.First) != 1 || l.First[0].File != "trace.csv" || l.First[0].Line != 3 {
		t.Errorf("first disagreements %+v, want one at trace.csv:3", l.First)
	}
}
