package gateway

import (
	"testing"

	"github.com/spf13/pflag"
)

// TestFlagsOptions: --policy-map and --descriptor become the read
// options; a malformed one is a usage error naming the flag.
func TestFlagsOptions(t *testing.T) {
	var f Flags
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	f.AddFlags(fs)
	if err := fs.Parse([]string{"--policy-from", "nginx.conf", "--policy-map", "$http_x_api_key=api_key,src=ip", "--descriptor", "remote_address=ip"}); err != nil {
		t.Fatal(err)
	}
	opt, err := f.Options()
	if err != nil {
		t.Fatal(err)
	}
	if f.From != "nginx.conf" || opt.Fields["$http_x_api_key"] != "api_key" || opt.Fields["src"] != "ip" || len(opt.Descriptors) != 1 || opt.Descriptors[0][0] != (Entry{Key: "remote_address", Field: "ip"}) {
		t.Errorf("From %q, options %+v", f.From, opt)
	}
	f = Flags{Map: []string{"nofield"}}
	_, err = f.Options()
	want := `--policy-map "nofield": want NAME=FIELD, such as '$http_x_api_key=api_key'`
	if e, ok := err.(*Error); !ok || err.Error() != want || !e.Usage() {
		t.Errorf("Options = %v, want the usage error %q", err, want)
	}
}
