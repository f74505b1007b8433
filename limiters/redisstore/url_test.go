package redisstore

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want Address
		str  string
	}{
		{"redis://127.0.0.1:6390/2", Address{Addrs: []string{"127.0.0.1:6390"}, DB: 2}, "redis://127.0.0.1:6390/2"},
		{"redis://localhost", Address{Addrs: []string{"localhost:6379"}}, "redis://localhost:6379/0"},
		{"redis://:secret@h:1/0", Address{Addrs: []string{"h:1"}, Password: "secret"}, "redis://h:1/0"},
		{"redis://me:p%40ss@h:1", Address{Addrs: []string{"h:1"}, Username: "me", Password: "p@ss"}, "redis://h:1/0"},
		{"redis://me:a:b@c@h:1", Address{Addrs: []string{"h:1"}, Username: "me", Password: "a:b@c"}, "redis://h:1/0"},
		{"redis://[::1]:7000/1", Address{Addrs: []string{"[::1]:7000"}, DB: 1}, "redis://[::1]:7000/1"},
		{"redis+cluster://a:7000,b:7001", Address{Addrs: []string{"a:7000", "b:7001"}, Cluster: true}, "redis+cluster://a:7000,b:7001"},
		{"redis+cluster://a:7000", Address{Addrs: []string{"a:7000"}, Cluster: true}, "redis+cluster://a:7000"},
		{"unix:///run/redis.sock", Address{Addrs: []string{"/run/redis.sock"}, Unix: true}, "unix:///run/redis.sock"},
		{"unix:///run/redis.sock?db=3", Address{Addrs: []string{"/run/redis.sock"}, Unix: true, DB: 3}, "unix:///run/redis.sock?db=3"},
		{"unix://:pw@/run/redis.sock?db=3", Address{Addrs: []string{"/run/redis.sock"}, Unix: true, DB: 3, Password: "pw"}, "unix:///run/redis.sock?db=3"},
		{"unix://me:p%2Fw@/run/redis.sock", Address{Addrs: []string{"/run/redis.sock"}, Unix: true, Username: "me", Password: "p/w"}, "unix:///run/redis.sock"},
		{"unix:///tmp/a@b.sock", Address{Addrs: []string{"/tmp/a@b.sock"}, Unix: true}, "unix:///tmp/a@b.sock"},
		{"rediss://h:6380/1", Address{Addrs: []string{"h:6380"}, DB: 1, TLS: true}, "rediss://h:6380/1"},
		{"rediss://:pw@h:6380/0?insecure", Address{Addrs: []string{"h:6380"}, Password: "pw", TLS: true, Insecure: true}, "rediss://h:6380/0?insecure"},
		{"rediss://h:6380?ca=/etc/ca.pem&insecure=false", Address{Addrs: []string{"h:6380"}, TLS: true, CAFile: "/etc/ca.pem"}, "rediss://h:6380/0?ca=%2Fetc%2Fca.pem"},
		{"rediss+cluster://a:7000,b:7001?insecure=true", Address{Addrs: []string{"a:7000", "b:7001"}, Cluster: true, TLS: true, Insecure: true}, "rediss+cluster://a:7000,b:7001?insecure"},
		{"redis+sentinel://s1:5000,s2/mymaster/2", Address{Addrs: []string{"s1:5000", "s2:26379"}, Master: "mymaster", DB: 2}, "redis+sentinel://s1:5000,s2:26379/mymaster/2"},
		{"redis+sentinel://u:pw@s1/m?sentinel_user=su&sentinel_password=sp", Address{Addrs: []string{"s1:26379"}, Master: "m", Username: "u", Password: "pw", SentinelUsername: "su", SentinelPassword: "sp"}, "redis+sentinel://s1:26379/m/0"},
		{"rediss+sentinel://s1/m?insecure", Address{Addrs: []string{"s1:26379"}, Master: "m", TLS: true, Insecure: true}, "rediss+sentinel://s1:26379/m/0?insecure"},
	} {
		got, err := ParseURL(tc.url)
		if err != nil {
			t.Errorf("ParseURL(%q): %v", tc.url, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseURL(%q) (-want +got):\n%s", tc.url, diff)
		}
		if s := got.String(); s != tc.str {
			t.Errorf("ParseURL(%q).String() = %q want %q", tc.url, s, tc.str)
		}
	}
	for _, tc := range []struct{ url, msg string }{
		{"127.0.0.1:6379", "want redis://"},
		{"http://h:1", `unknown scheme "http"`},
		{"redis://h:1/x", `database "x"`},
		{"redis://h:99999", "port"},
		{"redis://h:1,g:2", "redis+cluster://"},
		{"redis+cluster://a:1/2", "only database 0"},
		{"redis://", "no host"},
		{"redis://h:1,,g:2", "no host"},
		{"unix://relative/path", "absolute path"},
		{"unix:///s?x=1", `unknown parameter "x"`},
		{"redis://h:1/0?insecure", "TLS only: use rediss://"},
		{"redis://h:1/0?db=2", `unknown parameter "db"`},
		{"rediss://h:1/0?insecure=maybe", "want true or false"},
		{"rediss://h:1/0?insecure&insecure", "given 2 times"},
		{"redis+sentinel://s1:1", "name the master"},
		{"redis+sentinel://s1:1/m/x", `database "x"`},
		{"redis://u:a/b@h:1/0", "unescaped"},
	} {
		_, err := ParseURL(tc.url)
		if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), Redact(tc.url)) {
			t.Errorf("ParseURL(%q) = %v, want an error naming the URL and saying %q", tc.url, err, tc.msg)
		}
	}
}

// TestURLErrorsHideThePassword: no error about a store URL shows its
// password, whatever is wrong with it (24 of 36 bad URLs did).
func TestURLErrorsHideThePassword(t *testing.T) {
	const pw = "TOPSECRET"
	bad := []string{
		"redis://u:TOPSECRET@127.0.0.1:notaport/0", "redis://:TOPSECRET@h:99999/0", "redis://:TOPSECRET@h:1/x",
		"redis://:TOPSECRET@h:1,g:2/0", "redis://:TOPSECRET@/0", "redis://:TOPSECRET@h:1,,g:2",
		"redis+cluster://:TOPSECRET@a:1/2", "redis+cluster://u:TOPSECRET@a:x", "http://u:TOPSECRET@h:1",
		"redi://:TOPSECRET@h", "u:TOPSECRET@h:1", "redis://u:TOP/SECRET@h:1", "redis://u:TOPSECRET@h:1/0?insecure",
		"rediss://u:TOPSECRET@h:1/0?insecure=nope", "rediss://u:TOPSECRET@h:1/0?x=1", "redis+sentinel://u:TOPSECRET@s",
		"redis+sentinel://u:TOPSECRET@s/m/x", "redis+sentinel://s/m?sentinel_password=TOPSECRET&x=1",
		"redis+sentinel://s:0/m?sentinel_password=TOPSECRET", "unix://u:TOPSECRET@relative", "unix://:TOPSECRET@/s?db=x",
		"unix://:TOPSECRET@/s?x=1", "redis://u:TOP%zzSECRET@h:1", "redis://u:TOPSECRET@[::1:1", "redis://u:TOPSECRET@h:1/-1",
		"rediss://u:TOPSECRET@h:1?ca=", "redis://u:TOPSECRET@h:1?%zz", "redis://u:TOP?SECRET@h:1",
	}
	for _, u := range bad {
		_, err := ParseURL(u)
		if err == nil {
			t.Errorf("ParseURL(%q): no error", u)
			continue
		}
		if strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), "TOP") && strings.Contains(err.Error(), "SECRET") {
			t.Errorf("ParseURL(%q): the error shows the password: %v", u, err)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"redis://u:TOPSECRET@h:1/0", "redis://u:xxxxx@h:1/0"},
		{"redis://:TOPSECRET@h:1/0", "redis://:xxxxx@h:1/0"},
		{"redis://TOPSECRET@h:1/0", "redis://xxxxx@h:1/0"},
		{"redis://u:TOP/SECRET@h:1/0", "redis://u:xxxxx@h:1/0"},
		{"redis+sentinel://s/m?sentinel_password=TOPSECRET&db=1", "redis+sentinel://s/m?sentinel_password=xxxxx&db=1"},
		{"redis://h:1/0", "redis://h:1/0"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestSchemesParse checks that Schemes lists exactly what ParseURL reads.
func TestSchemesParse(t *testing.T) {
	for _, s := range Schemes {
		u := s + "://h:1"
		if s == "unix" {
			u = "unix:///run/redis.sock"
		}
		if s == "redis+sentinel" || s == "rediss+sentinel" {
			u = s + "://h:1/mymaster"
		}
		if _, err := ParseURL(u); err != nil {
			t.Errorf("ParseURL(%q): %v", u, err)
		}
	}
	if _, err := ParseURL("http://h:1"); err == nil || !strings.Contains(err.Error(), strings.Join(Schemes, ", ")) {
		t.Errorf("ParseURL(http://h:1) = %v, want an error listing %v", err, Schemes)
	}
}
