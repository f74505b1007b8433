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
		{"redis://[::1]:7000/1", Address{Addrs: []string{"[::1]:7000"}, DB: 1}, "redis://[::1]:7000/1"},
		{"redis+cluster://a:7000,b:7001", Address{Addrs: []string{"a:7000", "b:7001"}, Cluster: true}, "redis+cluster://a:7000,b:7001"},
		{"redis+cluster://a:7000", Address{Addrs: []string{"a:7000"}, Cluster: true}, "redis+cluster://a:7000"},
		{"unix:///run/redis.sock", Address{Addrs: []string{"/run/redis.sock"}, Unix: true}, "unix:///run/redis.sock"},
		{"unix:///run/redis.sock?db=3", Address{Addrs: []string{"/run/redis.sock"}, Unix: true, DB: 3}, "unix:///run/redis.sock?db=3"},
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
	} {
		_, err := ParseURL(tc.url)
		if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), tc.url) {
			t.Errorf("ParseURL(%q) = %v, want an error naming the URL and saying %q", tc.url, err, tc.msg)
		}
	}
}
