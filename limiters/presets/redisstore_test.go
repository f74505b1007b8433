package presets

import (
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/ratesim/ratesim/limiters/redisstore"
)

// TestRedisStoreDeclinesLibraryKinds: the Redis store keeps the exact
// kinds; a library kind it declines with an error naming it, before it
// touches Redis.
func TestRedisStoreDeclinesLibraryKinds(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer client.Close()
	for _, p := range All() {
		if isGateway(p.Name) {
			continue // on textbook kinds, which the store keeps
		}
		params := paramsOf(p.Example)
		a, pol, err := p.Limiter(params)
		if err != nil {
			t.Fatal(err)
		}
		_, err = redisstore.New(client, []redisstore.Limiter{{Name: "lane", Algorithm: a, Policy: pol}}, redisstore.Options{})
		if err == nil || !strings.Contains(err.Error(), a.String()) {
			t.Errorf("%s (%v): %v, want a refusal naming it", p.Name, a, err)
		}
	}
}
