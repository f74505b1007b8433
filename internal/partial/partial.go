// Package partial writes and reads the partial result of a replay of one
// shard of a trace (ratesim's --shard I/N -o partial), and merges the
// partials of a trace's shards into the result of the whole.
//
// A partial is JSON Lines, self-describing and versioned. Its first line
// is the header: the format and its version, the version of ratesim that
// wrote it, the command and the arguments that shape its output (the
// policy file's content included), a fingerprint of those, the shard,
// and what the output states of the trace (its name, how it writes its
// times, the rows a lenient read skipped). Then, for each replay the
// command made, in order, the rows it emitted (each request with every
// result the command's output may show, and its position in the whole
// trace) and its report, the figures that merge exactly (sim.Part).
//
// The shard hash is sim.ShardOf: FNV-1a 64 of the key's bytes, modulo the
// number of shards; the key is the replay's (--key), as sim.AppendKey
// builds it.
package partial

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/ratesim/ratesim/traces"
)

// FormatName names the format in every header.
const FormatName = "ratesim-partial"

// Version is the version of the format this package writes and reads.
const Version = 1

// Orders of positions: a shard replayed in trace order, or one whose
// events were sorted by time (see sim.Position).
const (
	OrderTrace = "trace"
	OrderTime  = "time"
)

// Header is the first line of a partial.
type Header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Ratesim is the version of ratesim that wrote the partial.
	Ratesim string `json:"ratesim"`
	// Command and Args are the command and its arguments as a canonical
	// list of flags and traces, without --shard and -o.
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// Config is the --config file's path and content, when one is given.
	Config *ConfigFile `json:"config,omitempty"`
	// Fingerprint is a hash of the version of ratesim, the command, its
	// arguments and the policy file's content: partials merge only when
	// theirs are equal.
	Fingerprint string `json:"fingerprint"`
	Shard       Shard  `json:"shard"`
	// Order is how positions are ordered: OrderTrace or OrderTime.
	Order string `json:"order"`
	Trace Trace  `json:"trace"`
}

// ConfigFile is a policy file as the replay read it.
type ConfigFile struct {
	Path string `json:"path"`
	Data string `json:"data"`
}

// Shard is the shard of a partial: Index of Count.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// Trace is what the output states of the trace.
type Trace struct {
	Name    string            `json:"name"`
	RFC3339 bool              `json:"rfc3339"`
	Times   traces.TimeWriter `json:"times"`
	Sorted  bool              `json:"sorted"`
}

// Fingerprint returns the fingerprint of a replay: the version of
// ratesim, the command, its canonical arguments and its policy file.
func Fingerprint(version, command string, args []string, config *ConfigFile) string {
	h := sha256.New()
	write := func(s string) { fmt.Fprintf(h, "%d:%s\n", len(s), s) }
	write(version)
	write(command)
	for _, a := range args {
		write(a)
	}
	if config != nil {
		write(config.Path)
		write(config.Data)
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// Bytes are bytes as JSON: a string when they are UTF-8, else {"b64": ...},
// so that no byte of a key is lost.
type Bytes []byte

// MarshalJSON writes b.
func (b Bytes) MarshalJSON() ([]byte, error) {
	if utf8.Valid(b) {
		return json.Marshal(string(b))
	}
	return json.Marshal(map[string]string{"b64": base64.StdEncoding.EncodeToString(b)})
}

// UnmarshalJSON reads b.
func (b *Bytes) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		*b = Bytes(s)
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	raw, err := base64.StdEncoding.DecodeString(m["b64"])
	if err != nil {
		return err
	}
	*b = raw
	return nil
}
