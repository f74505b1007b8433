package redisstore

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ServerStats are the figures of one server (a Redis Cluster's master)
// that say whether it keeps the limiters' states, read from INFO, which
// any ACL user with +info may run.
type ServerStats struct {
	Addr string // the server's address
	// MaxMemory is its maxmemory in bytes (0: no limit), and
	// MaxMemoryPolicy what it does there: noeviction refuses writes
	// (OOM, which the failure policy decides); any other evicts keys, and
	// every state has a TTL, so even volatile-* policies evict them, and
	// a key evicted decides as a fresh one: a silent wrong decision.
	MaxMemory       int64
	MaxMemoryPolicy string
	// EvictedKeys counts the keys it evicted since it started (or since
	// CONFIG RESETSTAT), and Flushes its FLUSHALL and FLUSHDB commands:
	// if either grows during a run, states were lost.
	EvictedKeys int64
	Flushes     int64
}

// Evicts reports whether the server may evict keys: a memory limit and
// a policy other than noeviction.
func (s ServerStats) Evicts() bool {
	return s.MaxMemory > 0 && s.MaxMemoryPolicy != "noeviction"
}

// Stats reads the ServerStats of the server behind client, or of each
// master of a Redis Cluster.
func Stats(ctx context.Context, client redis.UniversalClient) ([]ServerStats, error) {
	if cc, ok := client.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		var all []ServerStats
		err := cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			st, err := nodeStats(ctx, node)
			mu.Lock()
			all = append(all, st)
			mu.Unlock()
			return err
		})
		sortStats(all)
		return all, err
	}
	st, err := nodeStats(ctx, client)
	return []ServerStats{st}, err
}

func sortStats(all []ServerStats) {
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && all[j].Addr < all[j-1].Addr; j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
}

type infoer interface {
	Info(ctx context.Context, section ...string) *redis.StringCmd
}

func nodeStats(ctx context.Context, c infoer) (ServerStats, error) {
	var st ServerStats
	if o, ok := c.(interface{ Options() *redis.Options }); ok {
		st.Addr = o.Options().Addr
	}
	fields := map[string]string{}
	// One section at a time: INFO takes several only since Redis 7.
	for _, section := range []string{"memory", "stats", "commandstats"} {
		text, err := c.Info(ctx, section).Result()
		if err != nil {
			return st, fmt.Errorf("redisstore: INFO %s on %s: %w", section, st.Addr, err)
		}
		sc := bufio.NewScanner(strings.NewReader(text))
		for sc.Scan() {
			if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":"); ok {
				fields[k] = v
			}
		}
	}
	st.MaxMemory, _ = strconv.ParseInt(fields["maxmemory"], 10, 64)
	st.MaxMemoryPolicy = fields["maxmemory_policy"]
	st.EvictedKeys, _ = strconv.ParseInt(fields["evicted_keys"], 10, 64)
	for _, cmd := range []string{"cmdstat_flushall", "cmdstat_flushdb"} {
		// calls=N,usec=...
		for _, part := range strings.Split(fields[cmd], ",") {
			if v, ok := strings.CutPrefix(part, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				st.Flushes += n
			}
		}
	}
	return st, nil
}
