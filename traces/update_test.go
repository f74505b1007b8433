package traces

import "flag"

// update rewrites the package's golden files ("go test ./... -update").
var update = flag.Bool("update", false, "rewrite golden files")
