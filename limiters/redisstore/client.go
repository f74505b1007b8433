package redisstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
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
	c, _ := Address{Addrs: addrs, Cluster: len(addrs) > 1}.NewClient(dialTimeout)
	return c
}

// Connect is NewClient followed by a PING, which must succeed within
// timeout: it returns an error naming the addresses when the server is
// unreachable.
func Connect(ctx context.Context, addrs []string, timeout time.Duration) (redis.UniversalClient, error) {
	return Address{Addrs: addrs, Cluster: len(addrs) > 1}.Connect(ctx, timeout)
}

// An Address says where a store's Redis is: one server, over TCP or a
// Unix socket, and its database; the nodes of a Redis Cluster; or the
// Sentinels of a master and its replicas. ParseURL reads one from a URL.
type Address struct {
	// Addrs are host:port pairs, or the path of a Unix socket.
	Addrs []string
	// Unix says Addrs[0] is the path of a Unix socket.
	Unix bool
	// Cluster says Addrs are nodes of a Redis Cluster (one is enough to
	// find the others).
	Cluster bool
	// Master, when not empty, names the master a Sentinel deployment
	// watches: Addrs are its Sentinels, and the client follows the master
	// through failovers.
	Master string
	// DB is the database of a single server or a Sentinel's master; a
	// cluster has only 0.
	DB int
	// Username and Password authenticate to the servers (for a Sentinel
	// deployment, to its master and replicas), when Password is not empty.
	Username, Password string
	// SentinelUsername and SentinelPassword authenticate to the Sentinels.
	SentinelUsername, SentinelPassword string
	// TLS connects over TLS, verifying the server's certificate against
	// the system's roots, or against the certificates of the PEM file
	// CAFile when it is not empty. Insecure skips the verification, for
	// tests against a certificate of their own.
	TLS      bool
	CAFile   string
	Insecure bool
}

// ParseURL parses a store's address:
//
//	redis://HOST:PORT/DB                         one server (port 6379 and DB 0 by default)
//	redis+cluster://HOST:PORT,HOST:PORT,...      a Redis Cluster, from any of its nodes
//	redis+sentinel://HOST:PORT,.../MASTER[/DB]   a master and its replicas, through their Sentinels (port 26379 by default)
//	unix:///PATH?db=DB                           one server on a Unix socket
//
// Each may carry USER:PASSWORD@ (or :PASSWORD@) before the host, or
// before the socket's path (unix://:PASSWORD@/PATH); escape "@", ":" and
// "/" in them as %40, %3A and %2F. rediss://, rediss+cluster:// and
// rediss+sentinel:// connect over TLS, verifying the servers against the
// system's roots, or those of ?ca=FILE; ?insecure skips the verification
// (for tests). A Sentinel deployment's URL may give the Sentinels' own
// credentials as ?sentinel_user=USER&sentinel_password=PASSWORD. Errors
// Schemes are the URL schemes ParseURL reads: "rediss" ones speak TLS.
var Schemes = []string{"redis", "rediss", "redis+cluster", "rediss+cluster", "redis+sentinel", "rediss+sentinel", "unix"}

// never show a password.
func ParseURL(s string) (Address, error) {
	bad := func(format string, args ...any) (Address, error) {
		return Address{}, &URLError{URL: Redact(s), Reason: fmt.Sprintf(format, args...)}
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return bad("want redis://HOST:PORT/DB, redis+cluster://HOST:PORT,..., redis+sentinel://HOST:PORT,.../MASTER or unix:///PATH")
	}
	var a Address
	var form string
	// The cases are Schemes.
	switch scheme {
	case "unix":
		form = "unix"
	case "redis", "rediss":
		form = "redis"
	case "redis+cluster", "rediss+cluster":
		form, a.Cluster = "cluster", true
	case "redis+sentinel", "rediss+sentinel":
		form = "sentinel"
	default:
		return bad("unknown scheme %q (valid: %s)", scheme, strings.Join(Schemes, ", "))
	}
	a.TLS = strings.HasPrefix(scheme, "rediss")
	// The credentials end at the last "@" (before a Unix socket's path,
	// at the first "@/"): a password may hold any character but "/" and
	// "?" unescaped.
	var creds string
	hasCreds := false
	if form == "unix" {
		if !strings.HasPrefix(rest, "/") {
			i := strings.Index(rest, "@/")
			if i < 0 {
				return bad("want unix:///PATH, the socket's absolute path, or unix://USER:PASSWORD@/PATH")
			}
			creds, rest, hasCreds = rest[:i], rest[i+1:], true
		}
	} else if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		creds, rest, hasCreds = rest[:i], rest[i+1:], true
		if strings.ContainsAny(creds, "/?") {
			return bad(`the credentials hold an unescaped "/", "?" or "@": write them as %%2F, %%3F and %%40`)
		}
	}
	if hasCreds {
		user, pass, hasPass := strings.Cut(creds, ":")
		if !hasPass {
			user, pass = "", user
		}
		var err1, err2 error
		a.Username, err1 = url.PathUnescape(user)
		a.Password, err2 = url.PathUnescape(pass)
		if err1 != nil || err2 != nil {
			return bad("the credentials are not URL-escaped")
		}
	}
	rest, query, _ := strings.Cut(rest, "?")
	params, err := url.ParseQuery(query)
	if err != nil {
		return bad("the query is not URL-escaped")
	}
	valid := map[string][]string{
		"unix":     {"db"},
		"redis":    {"ca", "insecure"},
		"cluster":  {"ca", "insecure"},
		"sentinel": {"ca", "insecure", "sentinel_password", "sentinel_user"},
	}[form]
	for _, k := range slices.Sorted(maps.Keys(params)) {
		v := params[k]
		if !slices.Contains(valid, k) || (k == "ca" || k == "insecure") && !a.TLS {
			if !a.TLS && (k == "ca" || k == "insecure") {
				return bad("parameter %q applies to TLS only: use %s://", k, strings.Replace(scheme, "redis", "rediss", 1))
			}
			return bad("unknown parameter %q (valid: %s)", k, strings.Join(valid, ", "))
		}
		if len(v) != 1 {
			return bad("parameter %q given %d times", k, len(v))
		}
		switch k {
		case "db":
			db, err := strconv.Atoi(v[0])
			if err != nil || db < 0 {
				return bad("db %q: want a whole number, 0 or more", v[0])
			}
			a.DB = db
		case "ca":
			if v[0] == "" {
				return bad("ca: want the path of a PEM file")
			}
			a.CAFile = v[0]
		case "insecure":
			b, err := strconv.ParseBool(orTrue(v[0]))
			if err != nil {
				return bad("insecure %q: want true or false", v[0])
			}
			a.Insecure = b
		case "sentinel_user":
			a.SentinelUsername = v[0]
		case "sentinel_password":
			a.SentinelPassword = v[0]
		}
	}
	if form == "unix" {
		if !strings.HasPrefix(rest, "/") || len(rest) < 2 {
			return bad("want unix:///PATH, the socket's absolute path")
		}
		path, err := url.PathUnescape(rest)
		if err != nil {
			return bad("the path is not URL-escaped")
		}
		a.Unix, a.Addrs = true, []string{path}
		return a, nil
	}
	hosts, path, _ := strings.Cut(rest, "/")
	if form == "sentinel" {
		master, db, _ := strings.Cut(path, "/")
		if master == "" {
			return bad("want redis+sentinel://HOST:PORT,.../MASTER[/DB]: name the master")
		}
		a.Master, path = master, db
	}
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
	defPort := "6379"
	if form == "sentinel" {
		defPort = "26379"
	}
	for _, h := range strings.Split(hosts, ",") {
		if h == "" {
			return bad("no host")
		}
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			if !strings.Contains(h, ":") || strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
				host, port = strings.Trim(h, "[]"), defPort
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
		if strings.ContainsAny(host, "[]") {
			return bad("host %q: want HOST:PORT, or [IPv6]:PORT", h)
		}
		a.Addrs = append(a.Addrs, net.JoinHostPort(host, port))
	}
	if form == "redis" && len(a.Addrs) > 1 {
		return bad("several hosts: use redis+cluster:// for a Redis Cluster, redis+sentinel:// for Sentinels")
	}
	return a, nil
}

func orTrue(v string) string {
	if v == "" {
		return "true" // ?insecure alone
	}
	return v
}

// A URLError is a store URL that ParseURL refuses. URL is the URL with
// any password replaced by "xxxxx".
type URLError struct {
	URL    string
	Reason string
}

func (e *URLError) Error() string {
	return fmt.Sprintf("redisstore: store URL %q: %s", e.URL, e.Reason)
}

// Redact returns the store URL s with its passwords, in the credentials
// before the host and in a sentinel_password parameter, replaced by
// "xxxxx": the URL as errors and reports may show it.
func Redact(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		scheme, rest = "", s
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		user, _, hasPass := strings.Cut(rest[:i], ":")
		if hasPass && !strings.ContainsAny(user, "/?") {
			rest = user + ":xxxxx" + rest[i:]
		} else {
			rest = "xxxxx" + rest[i:]
		}
	}
	if ok {
		s = scheme + "://" + rest
	} else {
		s = rest
	}
	head, query, hasQuery := strings.Cut(s, "?")
	if !hasQuery {
		return s
	}
	parts := strings.Split(query, "&")
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok && strings.Contains(strings.ToLower(k), "password") {
			parts[i] = k + "=xxxxx"
		}
	}
	return head + "?" + strings.Join(parts, "&")
}

// String returns the address as a URL, without the credentials.
func (a Address) String() string {
	scheme := "redis"
	if a.TLS {
		scheme = "rediss"
	}
	var q []string
	if a.CAFile != "" {
		q = append(q, "ca="+url.QueryEscape(a.CAFile))
	}
	if a.Insecure {
		q = append(q, "insecure")
	}
	query := ""
	if len(q) > 0 {
		query = "?" + strings.Join(q, "&")
	}
	switch {
	case a.Unix:
		s := "unix://" + a.Addrs[0]
		if a.DB != 0 {
			s += "?db=" + strconv.Itoa(a.DB)
		}
		return s
	case a.Cluster:
		return scheme + "+cluster://" + strings.Join(a.Addrs, ",") + query
	case a.Master != "":
		return scheme + "+sentinel://" + strings.Join(a.Addrs, ",") + "/" + a.Master + "/" + strconv.Itoa(a.DB) + query
	}
	return scheme + "://" + strings.Join(a.Addrs, ",") + "/" + strconv.Itoa(a.DB) + query
}

// TLSConfig returns the TLS configuration of the address, or nil when it
// connects in the clear.
func (a Address) TLSConfig() (*tls.Config, error) {
	if !a.TLS {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: a.Insecure}
	if a.CAFile != "" {
		pem, err := os.ReadFile(a.CAFile)
		if err != nil {
			return nil, fmt.Errorf("redisstore: the CA file of the store URL: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("redisstore: the CA file %s holds no PEM certificate", a.CAFile)
		}
	}
	return c, nil
}

// NewClient returns a go-redis client for the address, made as the
// package's NewClient makes one: no retries of its own, at most
// dialTimeout to connect, RESP2. It fails only when the address's CA
// file cannot be read.
func (a Address) NewClient(dialTimeout time.Duration) (redis.UniversalClient, error) {
	tc, err := a.TLSConfig()
	if err != nil {
		return nil, err
	}
	opts := &redis.UniversalOptions{
		Addrs:                 a.Addrs,
		DB:                    a.DB,
		Username:              a.Username,
		Password:              a.Password,
		SentinelUsername:      a.SentinelUsername,
		SentinelPassword:      a.SentinelPassword,
		MasterName:            a.Master,
		IsClusterMode:         a.Cluster,
		TLSConfig:             tc,
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
	return redis.NewUniversalClient(opts), nil
}

// Connect is NewClient followed by a PING, which must succeed within
// timeout: it returns an error naming the address when the server is
// unreachable.
func (a Address) Connect(ctx context.Context, timeout time.Duration) (redis.UniversalClient, error) {
	c, err := a.NewClient(timeout)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		return nil, &ConnectError{Addr: a, Err: err}
	}
	return c, nil
}

// A ConnectError is a store that did not answer a PING.
type ConnectError struct {
	Addr Address
	Err  error
}

func (e *ConnectError) Error() string {
	return fmt.Sprintf("redisstore: cannot reach redis at %s (%s): %v", strings.Join(e.Addr.Addrs, ","), e.Addr, e.Err)
}

func (e *ConnectError) Unwrap() error { return e.Err }

// ReadPassword reads a password from the file at path, as --password-file
// names one: its first line, without the line's end. An empty one is an
// error.
func ReadPassword(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("redisstore: password file: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		return "", fmt.Errorf("redisstore: password file %s: its first line is empty", path)
	}
	return line, nil
}
