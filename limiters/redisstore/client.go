package redisstore

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strconv"
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
	return Address{Addrs: addrs, Cluster: len(addrs) > 1}.NewClient(dialTimeout)
}

// Connect is NewClient followed by a PING, which must succeed within
// timeout: it returns an error naming the addresses when the server is
// unreachable.
func Connect(ctx context.Context, addrs []string, timeout time.Duration) (redis.UniversalClient, error) {
	return Address{Addrs: addrs, Cluster: len(addrs) > 1}.Connect(ctx, timeout)
}

// An Address says where a store's Redis is: one server, over TCP or a
// Unix socket, and its database, or the nodes of a Redis Cluster. ParseURL
// reads one from a URL.
type Address struct {
	// Addrs are host:port pairs, or the path of a Unix socket.
	Addrs []string
	// Unix says Addrs[0] is the path of a Unix socket.
	Unix bool
	// Cluster says Addrs are nodes of a Redis Cluster (one is enough to
	// find the others).
	Cluster bool
	// DB is the database of a single server; a cluster has only 0.
	DB int
	// Username and Password authenticate, when Password is not empty.
	Username, Password string
}

// ParseURL parses a store's address:
//
//	redis://HOST:PORT/DB                    one server (port 6379 and DB 0 by default)
//	redis+cluster://HOST:PORT,HOST:PORT,... a Redis Cluster, from any of its nodes
//	unix:///PATH?db=DB                      one server on a Unix socket
//
// The redis forms may carry USER:PASSWORD@ before the host.
func ParseURL(s string) (Address, error) {
	bad := func(format string, args ...any) (Address, error) {
		return Address{}, fmt.Errorf("redisstore: store URL %q: %s", s, fmt.Sprintf(format, args...))
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return bad("want redis://HOST:PORT/DB, redis+cluster://HOST:PORT,... or unix:///PATH")
	}
	var a Address
	switch scheme {
	case "unix":
		u, err := url.Parse(s)
		if err != nil || u.Path == "" || u.Host != "" {
			return bad("want unix:///PATH, the socket's absolute path")
		}
		a.Unix, a.Addrs = true, []string{u.Path}
		for k, v := range u.Query() {
			if k != "db" || len(v) != 1 {
				return bad("unknown parameter %q (valid: db)", k)
			}
			db, err := strconv.Atoi(v[0])
			if err != nil || db < 0 {
				return bad("db %q: want a whole number, 0 or more", v[0])
			}
			a.DB = db
		}
		return a, nil
	case "redis", "redis+cluster":
	default:
		return bad("unknown scheme %q (valid: redis, redis+cluster, unix)", scheme)
	}
	a.Cluster = scheme == "redis+cluster"
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		user, pass, hasPass := strings.Cut(rest[:i], ":")
		if !hasPass {
			user, pass = "", user
		}
		var err1, err2 error
		a.Username, err1 = url.PathUnescape(user)
		a.Password, err2 = url.PathUnescape(pass)
		if err1 != nil || err2 != nil {
			return bad("the credentials are not URL-escaped")
		}
		rest = rest[i+1:]
	}
	hosts, path, _ := strings.Cut(rest, "/")
	if path != "" {
		db, err := strconv.Atoi(path)
		if err != nil || db < 0 {
			return bad("database %q: want a whole number, 0 or more", path)
		}
		if a.Cluster && db != 0 {
			return bad("a Redis Cluster has only database 0")
		}
		a.DB = db
	}
	for _, h := range strings.Split(hosts, ",") {
		if h == "" {
			return bad("no host")
		}
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			if !strings.Contains(h, ":") || strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
				host, port = strings.Trim(h, "[]"), "6379"
			} else {
				return bad("host %q: want HOST:PORT", h)
			}
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return bad("host %q: port %q is not a number from 1 to 65535", h, port)
		}
		if host == "" {
			return bad("host %q has no name", h)
		}
		a.Addrs = append(a.Addrs, net.JoinHostPort(host, port))
	}
	if !a.Cluster && len(a.Addrs) > 1 {
		return bad("several hosts: use redis+cluster:// for a Redis Cluster")
	}
	return a, nil
}

// String returns the address as a URL, without the password.
func (a Address) String() string {
	switch {
	case a.Unix:
		s := "unix://" + a.Addrs[0]
		if a.DB != 0 {
			s += "?db=" + strconv.Itoa(a.DB)
		}
		return s
	case a.Cluster:
		return "redis+cluster://" + strings.Join(a.Addrs, ",")
	}
	return "redis://" + strings.Join(a.Addrs, ",") + "/" + strconv.Itoa(a.DB)
}

// NewClient returns a go-redis client for the address, made as the
// package's NewClient makes one: no retries of its own, at most
// dialTimeout to connect, RESP2.
func (a Address) NewClient(dialTimeout time.Duration) redis.UniversalClient {
	opts := &redis.UniversalOptions{
		Addrs:                 a.Addrs,
		DB:                    a.DB,
		Username:              a.Username,
		Password:              a.Password,
		IsClusterMode:         a.Cluster,
		MaxRetries:            -1,
		DialTimeout:           dialTimeout,
		DialerRetries:         1,
		ContextTimeoutEnabled: true,
		Protocol:              2,
	}
	if a.Unix {
		path := a.Addrs[0]
		opts.Dialer = func(ctx context.Context, _, _ string) (net.Conn, error) {
			d := net.Dialer{Timeout: dialTimeout}
			return d.DialContext(ctx, "unix", path)
		}
	}
	return redis.NewUniversalClient(opts)
}

// Connect is NewClient followed by a PING, which must succeed within
// timeout: it returns an error naming the address when the server is
// unreachable.
func (a Address) Connect(ctx context.Context, timeout time.Duration) (redis.UniversalClient, error) {
	c := a.NewClient(timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("redisstore: cannot reach redis at %s: %w", strings.Join(a.Addrs, ","), err)
	}
	return c, nil
}
