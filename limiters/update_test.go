package limiters

import "flag"

// The repository rewrites its golden files with "go test ./... -update".
// This package has none, but accepts the flag so that command runs.
var _ = flag.Bool("update", false, "rewrite golden files (none in this package)")
