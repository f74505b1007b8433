package traces

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// FileExtensions are the extensions of the files that hold traces, as a
// shell completes them: every format's Extensions, log (a server's log,
// whose content says its format) and gz.
func FileExtensions() []string {
	var exts []string
	for _, e := range catalogue {
		exts = append(exts, e.Extensions...)
	}
	return append(exts, "log", "gz")
}

// FieldNames returns the field names of the first record of the trace
// at path, for completion: a CSV header's columns, or a JSON Lines
// object's keys and their dotted paths, sorted; nil when it cannot tell.
func FieldNames(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 1<<20)).ReadString('\n')
	if err != nil && line == "" {
		return nil
	}
	line = strings.TrimSpace(strings.TrimPrefix(line, "\ufeff"))
	if strings.HasPrefix(line, "{") {
		var obj map[string]any
		if json.Unmarshal([]byte(line), &obj) != nil {
			return nil
		}
		var names []string
		var walk func(prefix string, m map[string]any)
		walk = func(prefix string, m map[string]any) {
			for k, v := range m {
				names = append(names, prefix+k)
				if sub, ok := v.(map[string]any); ok {
					walk(prefix+k+".", sub)
				}
			}
		}
		walk("", obj)
		slices.Sort(names)
		return names
	}
	fields, err := csv.NewReader(strings.NewReader(line)).Read()
	if err != nil {
		return nil
	}
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	return fields
}

// Users returns, sorted, the users that begin with prefix among the
// records of the first MiB of the trace at path, at most max of them,
// for completion; nil when it cannot be read.
func Users(path, prefix string, max int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	r, err := NewReader(io.LimitReader(f, 1<<20), path, Options{Lenient: true})
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var users []string
	for len(users) < max {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if u := string(ev.User); !seen[u] && strings.HasPrefix(u, prefix) {
			seen[u] = true
			users = append(users, u)
		}
	}
	slices.Sort(users)
	return users
}

// ParseSize parses a size in bytes, as SortOptions.MaxMemory takes it: a
// whole number with an optional KiB, MiB or GiB (also KB, MB, GB, K, M,
// G, all powers of 1024).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 {
		return 0, errors.New("want a positive size such as 64MiB, 512KiB or 2GiB")
	}
	if n > math.MaxInt64/mult {
		return 0, errors.New("too large")
	}
	return n * mult, nil
}

// commonZones are offered when the machine has no zoneinfo directory to
// list.
var commonZones = []string{"UTC", "Local", "America/Los_Angeles", "America/New_York", "America/Sao_Paulo",
	"Europe/Berlin", "Europe/London", "Europe/Paris", "Asia/Kolkata", "Asia/Shanghai", "Asia/Tokyo", "Australia/Sydney"}

// Zones returns the time zone names that begin with prefix, as
// Options.Location is loaded from (time.LoadLocation), for completion:
// those of the system's zoneinfo, else common ones.
func Zones(prefix string) []string {
	var zones []string
	const dir = "/usr/share/zoneinfo"
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		name, _ := filepath.Rel(dir, path)
		if first := name[0]; first >= 'A' && first <= 'Z' && !strings.Contains(name, ".") && strings.HasPrefix(name, prefix) {
			zones = append(zones, name)
		}
		return nil
	})
	if len(zones) == 0 {
		for _, z := range commonZones {
			if strings.HasPrefix(z, prefix) {
				zones = append(zones, z)
			}
		}
	}
	return zones
}
