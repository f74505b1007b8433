package redisstore

import (
	"strings"
	"testing"
)

// FuzzParseURL: no input panics ParseURL; no error and no String of what
// it parsed shows the password of the credentials a URL carries; and an
// address parsed reads back, from its String, as itself without them.
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
		// The password: what follows the first ":" up to the last "@" of
		// the text after "://".
		_, rest, ok := strings.Cut(s, "://")
		pw := ""
		if i := strings.LastIndexByte(rest, '@'); ok && i >= 0 {
			if _, p, ok := strings.Cut(rest[:i], ":"); ok {
				pw = p
			}
		}
		// (Only a password found nowhere else in the URL can be told apart.)
		if strings.Count(s, pw) != 1 {
			pw = ""
		}
		if err != nil {
			if len(pw) >= 6 && strings.Contains(err.Error(), pw) {
				t.Fatalf("ParseURL(%q): the error shows the password: %v", s, err)
			}
			return
		}
		if a.Password != "" && len(a.Password) >= 6 && strings.Count(s, a.Password) == 1 && strings.Contains(a.String(), a.Password) {
			t.Fatalf("ParseURL(%q).String() = %q shows the password", s, a.String())
		}
		b, err := ParseURL(a.String())
		if err != nil {
			t.Fatalf("ParseURL(%q).String() = %q does not parse: %v", s, a.String(), err)
		}
		a.Username, a.Password, a.SentinelUsername, a.SentinelPassword = "", "", "", ""
		if b.String() != a.String() {
			t.Fatalf("ParseURL(%q): %q reads back as %q", s, a.String(), b.String())
		}
	})
}
