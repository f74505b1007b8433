// Package redistest starts a Redis Cluster of a test's own, for the tests
// that move its slots or stop its nodes: the shared cluster of
// RATESIM_REDIS_CLUSTER must stay as the other tests expect it.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Cluster is a Redis Cluster of masters started by StartCluster, each a
// redis-server process of the test's own.
type Cluster struct {
	// Addrs are the masters' host:port, in the order they were started.
	Addrs []string
	// IDs are the masters' node IDs, in the same order.
	IDs []string

	t       testing.TB
	clients []*redis.Client // one per node, for MoveSlot
	procs   []*exec.Cmd
	exited  []chan struct{} // closed when the process is gone
	stops   []sync.Once
}

// StartCluster starts n masters on free loopback ports with args added to
// each redis-server's, makes them a cluster with redis-cli --cluster
// create, and waits until every node reports cluster_state:ok. The test's
// cleanup stops every node it started, by its process.
//
// The Redis tests are on when RATESIM_REDIS_CLUSTER is set: without it
// the test is skipped, and so it is when redis-server or redis-cli is not
// on PATH, except under CI=true, where a skip would hide that nothing was
// tested and fails the test instead.
func StartCluster(t testing.TB, n int, args ...string) *Cluster {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf(format+"; under CI=true the Redis tests must run", args...)
		}
		t.Skipf(format, args...)
	}
	if os.Getenv("RATESIM_REDIS_CLUSTER") == "" {
		skip("RATESIM_REDIS_CLUSTER not set: no Redis Cluster tests")
	}
	server, err := exec.LookPath("redis-server")
	if err != nil {
		skip("redis-server not on PATH")
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		skip("redis-cli not on PATH")
	}
	c := &Cluster{t: t, stops: make([]sync.Once, n)}
	t.Cleanup(c.stopAll)
	dir := t.TempDir()
	for i := range n {
		c.start(server, dir, i, args)
	}
	create := exec.Command(cli, append(append([]string{"--cluster", "create"}, c.Addrs...), "--cluster-replicas", "0", "--cluster-yes")...)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	for i, addr := range c.Addrs {
		c.WaitState(addr, "ok", 15*time.Second)
		c.clients = append(c.clients, c.Node(i))
		id, err := c.clients[i].Do(context.Background(), "cluster", "myid").Text()
		if err != nil {
			t.Fatalf("CLUSTER MYID on %s: %v", addr, err)
		}
		c.IDs = append(c.IDs, id)
	}
	return c
}

// start starts node i on a free port whose cluster bus port (+10000) is
// free too, and waits until it answers.
func (c *Cluster) start(server, dir string, i int, args []string) {
	c.t.Helper()
	for tries := 0; tries < 20; tries++ {
		port, ok := freePort()
		if !ok {
			continue
		}
		p := strconv.Itoa(port)
		cmd := exec.Command(server, append([]string{
			"--port", p, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--dir", dir, "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes-"+p+".conf"),
		}, args...)...)
		if err := cmd.Start(); err != nil {
			c.t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() {
			cmd.Wait()
			close(exited)
		}()
		addr := net.JoinHostPort("127.0.0.1", p)
		client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
		up := false
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			select {
			case <-exited: // lost the port to another process: try another
			default:
				if client.Ping(context.Background()).Err() != nil {
					continue
				}
				up = true
			}
			break
		}
		client.Close()
		if up {
			c.procs = append(c.procs, cmd)
			c.exited = append(c.exited, exited)
			c.Addrs = append(c.Addrs, addr)
			return
		}
		cmd.Process.Kill()
		<-exited
	}
	c.t.Fatalf("could not start cluster node %d", i)
}

// freePort returns a loopback port free now, with its bus port.
func freePort() (int, bool) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, false
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if port+10000 > 65535 {
		return 0, false
	}
	bus, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000)))
	if err != nil {
		return 0, false
	}
	bus.Close()
	return port, true
}

// Node returns a client of node i alone, closed by the test's cleanup.
func (c *Cluster) Node(i int) *redis.Client {
	client := redis.NewClient(&redis.Options{Addr: c.Addrs[i], MaxRetries: -1, DialTimeout: time.Second})
	c.t.Cleanup(func() { client.Close() })
	return client
}

// Stop kills node i and waits until its process is gone.
func (c *Cluster) Stop(i int) {
	c.stops[i].Do(func() {
		c.procs[i].Process.Kill()
		<-c.exited[i]
	})
}

func (c *Cluster) stopAll() {
	for i := range c.procs {
		c.Stop(i)
	}
}

// WaitState waits until the node at addr reports cluster_state:state,
// failing the test after timeout.
func (c *Cluster) WaitState(addr, state string, timeout time.Duration) {
	c.t.Helper()
	client := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer client.Close()
	var info string
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		info, err = client.ClusterInfo(context.Background()).Result()
		if err == nil && strings.Contains(info, "cluster_state:"+state+"\r\n") {
			return
		}
	}
	c.t.Fatalf("cluster node %s: no cluster_state:%s after %v:\n%s", addr, state, timeout, info)
}

// Owner returns the index of the master that serves slot, as node 0 sees
// it.
func (c *Cluster) Owner(slot int) (int, error) {
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: c.Addrs[0], MaxRetries: -1})
	defer client.Close()
	shards, err := client.ClusterSlots(ctx).Result()
	if err != nil {
		return 0, err
	}
	for _, s := range shards {
		if slot >= s.Start && slot <= s.End && len(s.Nodes) > 0 {
			for i, id := range c.IDs {
				if s.Nodes[0].ID == id {
					return i, nil
				}
			}
			return 0, fmt.Errorf("slot %d: served by unknown node %s", slot, s.Nodes[0].ID)
		}
	}
	return 0, fmt.Errorf("slot %d: served by no node", slot)
}

// MoveSlot moves slot from master from to master to as redis-cli
// --cluster reshard does, but migrating one key per MIGRATE, so that a
// hash tag's keys are split between the nodes for a while: IMPORTING on
// the target, MIGRATING on the source, MIGRATE key by key, then SETSLOT
// NODE on the target, the source and every other master.
func (c *Cluster) MoveSlot(ctx context.Context, slot, from, to int) error {
	src, dst := c.clients[from], c.clients[to]
	host, port, _ := net.SplitHostPort(c.Addrs[to])
	if err := dst.Do(ctx, "cluster", "setslot", slot, "importing", c.IDs[from]).Err(); err != nil {
		return fmt.Errorf("slot %d IMPORTING on %s: %w", slot, c.Addrs[to], err)
	}
	if err := src.Do(ctx, "cluster", "setslot", slot, "migrating", c.IDs[to]).Err(); err != nil {
		return fmt.Errorf("slot %d MIGRATING on %s: %w", slot, c.Addrs[from], err)
	}
	for {
		keys, err := src.ClusterGetKeysInSlot(ctx, slot, 10).Result()
		if err != nil {
			return fmt.Errorf("slot %d GETKEYSINSLOT on %s: %w", slot, c.Addrs[from], err)
		}
		if len(keys) == 0 {
			break
		}
		for _, k := range keys {
			if err := src.Migrate(ctx, host, port, k, 0, 5*time.Second).Err(); err != nil {
				return fmt.Errorf("slot %d MIGRATE %s: %w", slot, k, err)
			}
		}
	}
	// The target first, then the source: as redis-cli does, so that no
	// node sends the slot's clients back and forth.
	for _, i := range append([]int{to, from}, c.others(from, to)...) {
		if err := c.clients[i].Do(ctx, "cluster", "setslot", slot, "node", c.IDs[to]).Err(); err != nil {
			return fmt.Errorf("slot %d NODE on %s: %w", slot, c.Addrs[i], err)
		}
	}
	return nil
}

func (c *Cluster) others(a, b int) []int {
	var rest []int
	for i := range c.Addrs {
		if i != a && i != b {
			rest = append(rest, i)
		}
	}
	return rest
}
