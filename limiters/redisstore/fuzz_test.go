package redisstore

import (
	"strings"
	"testing"
)

// FuzzParseURL: no input panics ParseURL; an address parsed reads back,
// from its String, as itself without its credentials; and no error and no
// String of what it parsed shows the password of the credentials a URL
// carries.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"redis://u:secretpw@h:1/0", "rediss://:secretpw@h:6380/0?insecure", "redis+cluster://a:1,b:2",
		"redis+sentinel://u:secretpw@s1,s2/m/3?sentinel_password=secretpw", "unix://:secretpw@/tmp/r.sock?db=2",
		"redis://u:a/b@h", "redis://u:secretpw@h:99999", "http://u:secretpw@h", "unix:///tmp/a@b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseURL(s)
		if err == nil {
			b, err := ParseURL(a.String())
			if err != nil {
				t.Fatalf("ParseURL(%q).String() = %q does not parse: %v", s, a.String(), err)
			}
			a.Username, a.Password, a.SentinelUsername, a.SentinelPassword = "", "", "", ""
			if b.String() != a.String() {
				t.Fatalf("ParseURL(%q): %q reads back as %q", s, a.String(), b.String())
			}
		}
		// The same URL with a password no other text could show by
		// chance (the input's own password may also be a scheme's name, or
		// appear in the escapes of a quoted field): neither the error nor
		// the String of what it parsed shows it.
		m, ok := withPassword(s, marker)
		if !ok {
			return
		}
		a, err = ParseURL(m)
		if err != nil {
			if strings.Contains(err.Error(), marker) {
				t.Fatalf("ParseURL(%q): the error shows the password: %v", m, err)
			}
			return
		}
		if a.Password != marker {
			t.Fatalf("ParseURL(%q): password %q, want %q", m, a.Password, marker)
		}
		if strings.Contains(a.String(), marker) {
			t.Fatalf("ParseURL(%q).String() = %q shows the password", m, a.String())
		}
	})
}

// marker is a password made of letters no quoting escapes and no name of
// a scheme, parameter or valid value holds.
const marker = "QKpwMARKqk"

// withPassword gives s with the password of its credentials replaced by
// pw, the credentials found as the store URL grammar finds them: after
// "://", up to the last "@" (for a Unix socket, up to the first "@/"
// unless the path follows "://" directly), the password after the first
// ":". It reports false for a URL with no password or where pw would not
// be the only copy.
func withPassword(s, pw string) (string, bool) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return "", false
	}
	end := strings.LastIndexByte(rest, '@')
	if scheme == "unix" {
		if strings.HasPrefix(rest, "/") {
			return "", false
		}
		end = strings.Index(rest, "@/")
	}
	if end < 0 {
		return "", false
	}
	user, _, ok := strings.Cut(rest[:end], ":")
	if !ok {
		return "", false
	}
	m := scheme + "://" + user + ":" + pw + rest[end:]
	return m, strings.Count(m, pw) == 1
}
