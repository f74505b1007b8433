package sim

import (
	"reflect"

	gocmp "github.com/google/go-cmp/cmp"
)

// quickDiff is gocmp.Diff(want, got), without its cost when the two are
// equal: reflect.DeepEqual decides that first, and only values that
// differ are handed to go-cmp for the diff to show. On the decisions of
// a trace of thousands of requests go-cmp's walk costs more than the
// replay itself, several times more under the race detector.
func quickDiff(want, got any) string {
	if reflect.DeepEqual(want, got) {
		return ""
	}
	return gocmp.Diff(want, got)
}
