package redisstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// NewClient returns a go-redis client for addrs as a Store needs it: a
// plain client for one address, a Redis Cluster client for several, that
// never retries a command on its own (MaxRetries: -1), waits at most
// dialTimeout for a connection (go-redis's default of 5s when 0) and dials
// once per attempt rather than five times, honours the deadlines of the
// contexts it is given, and speaks RESP2, which every Redis since 2.6
// does.
func NewClient(addrs []string, dialTimeout time.Duration) redis.UniversalClient {
	return redis.NewUniversalClient(&redis.UniversalOptions{
		Addrs:                 addrs,
		MaxRetries:            -1,
		DialTimeout:           dialTimeout,
		DialerRetries:         1,
		ContextTimeoutEnabled: true,
		Protocol:              2,
	})
}

// Connect is NewClient followed by a PING, which must succeed within
// timeout: it returns an error naming the addresses when the server is
// unreachable.
func Connect(ctx context.Context, addrs []string, timeout time.Duration) (redis.UniversalClient, error) {
	c := NewClient(addrs, timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("redisstore: cannot reach redis at %s: %w", strings.Join(addrs, ","), err)
	}
	return c, nil
}
