package sim

import (
	"errors"
	"fmt"
	"io"

	"github.com/ratesim/ratesim/traces"
)

// A Shard is one of Count parts of a replay, split by key: the keys whose
// ShardOf is Index. Every limiter keyed by the replay's key decides a
// key's requests from that key's requests alone, so the shards of a
// trace replay independently and their reports merge exactly (Merge).
type Shard struct {
	Index, Count int
	// Split says that the source holds only this shard's events, split
	// from the trace by another tool (with ShardOf), each event's Line its
	// line in the whole trace, which is one file: a request's position is
	// its line, and the whole trace's count and checksum of events are not
	// known. An event of another shard is an error.
	Split bool
}

// Sharded reports whether sh selects a shard: Count is positive.
func (sh Shard) Sharded() bool { return sh.Count > 0 }

// errBadShard is Run's error for a Shard out of range.
var errBadShard = errors.New("sim: a shard's index must be at least 0 and below its count")

// FNV-1a, 64 bits: the shard hash, kept stable so that other tools split
// a trace the same way.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// ShardOf returns the shard of a key among n: the FNV-1a 64-bit hash of
// the key's bytes, as an unsigned number, modulo n. The key is the one
// the replay limits by (see Config.KeyFields and AppendKey): the user's
// bytes as the trace wrote them, or the fields of --key joined. It is
// stable across versions and machines, so that another tool can split a
// trace into the same shards; ShardOf of a key is the same for every
// replay with the same n.
func ShardOf(key []byte, n int) int {
	return int(fnv64(key) % uint64(n))
}

// fnv64 is FNV-1a, 64 bits, of b.
func fnv64(b []byte) uint64 {
	h := uint64(fnvOffset)
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// AppendKey appends the limiter key of ev under fields (as
// Config.KeyFields: empty means the user) to dst. It is an error when ev
// lacks one of the fields.
func AppendKey(dst []byte, ev *traces.Event, fields []string) ([]byte, error) {
	if len(fields) == 0 {
		return append(dst, ev.User...), nil
	}
	dst, missing := appendKeyOf(dst, ev, fields)
	if missing != "" {
		return dst, &traces.ParseError{File: ev.File, Line: ev.Line, Msg: "no " + quote(missing) + " field to key on"}
	}
	return dst, nil
}

func quote(s string) string { return `"` + s + `"` }

// Positions are the trace positions (Request.Seq) of what a shard's
// report found that the report does not show: the requests that closed
// each lane's worst interval and each interval of Report.Top. A merge
// orders the findings of different shards by them, as the whole trace
// does.
type Positions struct {
	Burst []int64 // per lane; -1 when nothing passed
	Top   []int64 // per Report.Top entry
	// Events counts every event the shard's replay read, its own and the
	// other shards', and Sum is a checksum of their keys, times and costs
	// that does not depend on their order: the shards of one trace agree
	// on both.
	Events int64
	Sum    uint64
}

// shardSource passes on the events of one shard of src, each with its
// position in the whole trace, and checks that the whole trace comes
// interval by interval (Config.Every), as the engine checks only the
// events it sees.
type shardSource struct {
	src    Source
	sh     Shard
	fields []string
	key    []byte
	pos    int64 // the position of the event returned last
	next   int64 // the position of the next event read
	sum    uint64
	order  intervalOrder
}

func newShardSource(src Source, cfg *Config) *shardSource {
	return &shardSource{src: src, sh: cfg.Shard, fields: cfg.KeyFields, order: intervalOrder{every: int64(cfg.Every)}}
}

// Name is the source's name, if it has one.
func (s *shardSource) Name() string {
	if n, ok := s.src.(interface{ Name() string }); ok {
		return n.Name()
	}
	return "trace"
}

// Next returns the next event of the shard. An event whose key cannot be
// built is passed on, so that the engine reports it as it does in a
// replay of the whole trace.
func (s *shardSource) Next() (*traces.Event, error) {
	for {
		ev, err := s.src.Next()
		if err != nil {
			if err == io.EOF {
				return nil, io.EOF
			}
			return nil, err
		}
		pos := s.next
		s.next++
		if s.sh.Split {
			pos = int64(ev.Line)
		}
		s.sum += mixEvent(ev)
		if s.order.every > 0 {
			s.order.checkTime(ev.Time, ev.Line)
		}
		var missing string
		s.key = s.key[:0]
		if len(s.fields) == 0 {
			s.key = append(s.key, ev.User...)
		} else {
			s.key, missing = appendKeyOf(s.key, ev, s.fields)
		}
		s.sum += keySum(s.key)
		if missing != "" || ShardOf(s.key, s.sh.Count) == s.sh.Index {
			s.pos = pos
			return ev, nil
		}
		if s.sh.Split {
			return nil, &traces.ParseError{File: ev.File, Line: ev.Line, Msg: fmt.Sprintf("key %q is of shard %d of %d, not %d: the trace was split otherwise than by its key's FNV-1a hash", s.key, ShardOf(s.key, s.sh.Count), s.sh.Count, s.sh.Index)}
		}
	}
}

// positioned is a source that knows the trace position of the event it
// returned last.
func (s *shardSource) position() int64 { return s.pos }

// checkTime checks one event, at t on line, as check checks a batch's.
func (o *intervalOrder) checkTime(t int64, line int) {
	if o.line != 0 {
		return
	}
	k := floorDiv(t, o.every)
	if o.seen && k < o.k {
		o.line = line
	}
	o.k, o.seen = k, true
}

// seqOf returns the trace position of request i of b.
func (b *batch) seqOf(i int) int64 {
	if b.seqs != nil {
		return b.seqs[i]
	}
	return b.seq0 + int64(i)
}

// mixEvent mixes an event's time and cost into a checksum term.
func mixEvent(ev *traces.Event) uint64 {
	return mix64(uint64(ev.Time)*0x9e3779b97f4a7c15 ^ uint64(ev.Cost))
}

// keySum is a key's checksum term.
func keySum(key []byte) uint64 {
	return mix64(fnv64(key) ^ 0x5bd1e995)
}

// mix64 is a 64-bit finalizer (splitmix64's).
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
