package redistest

import (
	"os"
	"testing"
)

// The environment variables that point the Redis tests at servers (.ci/run
// starts them and sets these):
const (
	// EnvAddr is one server's host:port.
	EnvAddr = "RATESIM_REDIS_ADDR"
	// EnvCluster lists a three-master Redis Cluster's nodes, comma-separated.
	EnvCluster = "RATESIM_REDIS_CLUSTER"
	// EnvTLS is a server's host:port that speaks TLS only, with a
	// certificate for 127.0.0.1 signed by the CA of EnvTLSCA.
	EnvTLS = "RATESIM_REDIS_TLS"
	// EnvTLSCA is the path of that CA's certificate, in PEM.
	EnvTLSCA = "RATESIM_REDIS_TLS_CA"
	// EnvSentinel lists the Sentinels of a master with one replica.
	EnvSentinel = "RATESIM_REDIS_SENTINEL"
	// EnvSentinelMaster is the name the Sentinels know the master by.
	EnvSentinelMaster = "RATESIM_REDIS_SENTINEL_MASTER"
)

// Env returns the value of the environment variable name. Without it the
// test is skipped, with a line that says so, except under CI=true, where
// a skip would hide that nothing was tested and fails the test instead.
func Env(t testing.TB, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set; under CI=true the Redis tests must run", name)
		}
		t.Skipf("%s not set: no Redis server to test against", name)
	}
	return v
}
