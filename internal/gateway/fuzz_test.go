package gateway

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: no config of any format makes the readers panic, and every
// error they return is an *Error.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*")
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range Formats.Names() {
			opt := Options{Format: format, Descriptors: [][]Entry{{{"remote_address", "ip"}}, {{"path", "path"}, {"method", "method"}}}}
			cfg, err := Parse("c", data, opt)
			if err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("%s: %T %v, want *Error", format, err, err)
				}
				continue
			}
			for _, p := range cfg.File.Policies {
				if p.Match != nil {
					values := make([][]byte, len(p.Match.Fields))
					p.Match.Applies(values)
				}
			}
		}
	})
}
