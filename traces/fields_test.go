package traces

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// readLines reads every event of text as (user, time, cost, attrs) lines.
func readLines(t *testing.T, name, text string, opts Options) ([]string, error) {
	t.Helper()
	r, err := NewReader(strings.NewReader(text), name, opts)
	if err != nil {
		return nil, err
	}
	var out []string
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		line := string(ev.User) + " " + string(ev.TimeText) + " " + formatInt(ev.Time) + " " + formatInt(ev.Cost)
		for i := range ev.NumAttrs() {
			k, v := ev.AttrAt(i)
			line += " " + k + "=" + string(v)
		}
		out = append(out, line)
	}
}

func formatInt(v int64) string {
	var b [20]byte
	i := len(b)
	neg := v < 0
	u := uint64(v)
	if neg {
		u = -u
	}
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

func TestFieldMappingCSV(t *testing.T) {
	logs := "ip,time,path,status\n10.0.0.1,2024-03-10T14:00:00.120+01:00,/a,200\n10.0.0.2,2024-03-10T14:00:01+01:00,/b,429\n"
	renamed := "user,timestamp,path,status\n10.0.0.1,2024-03-10T14:00:00.120+01:00,/a,200\n10.0.0.2,2024-03-10T14:00:01+01:00,/b,429\n"
	got, err := readLines(t, "logs.csv", logs, Options{UserField: "ip", TimeField: "time"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := readLines(t, "t.csv", renamed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("mapped:\n%s\nrenamed:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The mapped fields are readable by their own names too.
	r, _ := NewReader(strings.NewReader(logs), "logs.csv", Options{UserField: "ip", TimeField: "time"})
	ev, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"ip": "10.0.0.1", "user": "10.0.0.1", "time": "2024-03-10T14:00:00.120+01:00", "path": "/a"} {
		if v, ok := ev.Attr(name); !ok || string(v) != want {
			t.Errorf("Attr(%q) = %q, %v; want %q", name, v, ok, want)
		}
	}
	_, err = readLines(t, "logs.csv", logs, Options{UserField: "client", TimeField: "time"})
	if err == nil || err.Error() != `traces: logs.csv:1: header has no "client" column (its columns: ip, time, path, status)` {
		t.Errorf("missing column: %v", err)
	}
	if _, err := NewReader(strings.NewReader(logs), "logs.csv", Options{UserField: "ip", TimeField: "ip"}); err == nil {
		t.Error("the same field for user and timestamp: no error")
	}
}

func TestFieldMappingNested(t *testing.T) {
	jsonl := `{"ts":"2024-01-01T00:00:01Z","request":{"remote_ip":"1.2.3.4","uri":"/x","tls":{"v":"1.3"}},"status":200}` + "\n" +
		`{"ts":"2024-01-01T00:00:02Z","request":{"remote_ip":"5.6.7.8","uri":"/y"},"status":429}` + "\n"
	got, err := readLines(t, "caddy.jsonl", jsonl, Options{UserField: "request.remote_ip", TimeField: "ts"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`1.2.3.4 2024-01-01T00:00:01Z 1704067201000000000 1 request={"remote_ip":"1.2.3.4","uri":"/x","tls":{"v":"1.3"}} request.uri=/x request.tls={"v":"1.3"} request.tls.v=1.3 status=200`,
		`5.6.7.8 2024-01-01T00:00:02Z 1704067202000000000 1 request={"remote_ip":"5.6.7.8","uri":"/y"} request.uri=/y status=429`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("JSON Lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	yml := "- ts: 2024-01-01T00:00:01Z\n  request: {remote_ip: 1.2.3.4, uri: /x}\n- ts: 2024-01-01T00:00:02Z\n  request: {remote_ip: 5.6.7.8, uri: /y}\n"
	got, err = readLines(t, "t.yaml", yml, Options{UserField: "request.remote_ip", TimeField: "ts"})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"1.2.3.4 2024-01-01T00:00:01Z 1704067201000000000 1 request.uri=/x",
		"5.6.7.8 2024-01-01T00:00:02Z 1704067202000000000 1 request.uri=/y",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("YAML:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	_, err = readLines(t, "caddy.jsonl", jsonl, Options{UserField: "request.client_ip", TimeField: "ts"})
	if err == nil || !strings.Contains(err.Error(), `missing "request.client_ip" (fields: "ts", "request", "request.remote_ip", "request.uri"`) {
		t.Errorf("missing nested field: %v", err)
	}
	_, err = readLines(t, "t.yaml", yml, Options{UserField: "request.client_ip", TimeField: "ts"})
	if err == nil || !strings.Contains(err.Error(), `missing "request.client_ip" (fields: "ts", "request.remote_ip", "request.uri")`) {
		t.Errorf("missing nested YAML field: %v", err)
	}
}

// TestMissingFieldKind: an error about a missing user or timestamp says
// which is missing, in every format, so that a caller can say how to name
// the field to read instead.
func TestMissingFieldKind(t *testing.T) {
	for _, c := range []struct {
		name, in string
		opts     Options
		want     Field
	}{
		{"a.csv", "ip,timestamp\n1.2.3.4,1\n", Options{}, FieldUser},
		{"a.csv", "user,time\nu1,1\n", Options{}, FieldTime},
		{"a.csv", "ip,time\n1.2.3.4,1\n", Options{}, FieldUser | FieldTime},
		{"a.csv", "ip,time\n1.2.3.4,1\n", Options{UserField: "ip"}, FieldTime},
		{"a.jsonl", `{"ip":"1.2.3.4","timestamp":1}`, Options{}, FieldUser},
		{"a.jsonl", `{"user":"u1","ts":1}`, Options{}, FieldTime},
		{"a.yaml", "- {ip: 1.2.3.4, timestamp: 1}\n", Options{}, FieldUser},
		{"a.yaml", "- {user: u1, ts: 1}\n", Options{}, FieldTime},
	} {
		_, err := readAll(t, c.name, c.in, c.opts)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Missing != c.want {
			t.Errorf("%s %q: %v, want Missing %b", c.name, c.in, err, c.want)
		}
	}
	// Other errors name no missing field.
	_, err := readAll(t, "a.csv", "user,timestamp\nu1,x\n", Options{})
	if pe := (*ParseError)(nil); !errors.As(err, &pe) || pe.Missing != 0 {
		t.Errorf("a bad timestamp: %#v", err)
	}
}
