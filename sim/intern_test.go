package sim

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// lookup is find for the tests, which need only the id.
func (in *interner) lookup(key []byte, h uint64, start *internSlot) (id uint32, added bool) {
	id, _, added = in.find(key, h, start)
	return id, added
}

func TestInterner(t *testing.T) {
	// hashes: real spread for most keys, and a group of keys sharing one
	// full hash, so tags collide and only the bytes tell them apart.
	hash := func(i int) uint64 {
		if i%10 == 0 {
			return 0xdeadbeef_00000042
		}
		return uint64(i) * 0x9e3779b97f4a7c15
	}
	in := newInterner()
	const n = 5000 // several growths of the table
	// Short keys and long ones, both among the keys that share a hash.
	key := func(i int) []byte {
		if i%3 == 0 {
			return []byte(fmt.Sprintf("a-longer-key-%d", i))
		}
		return []byte(fmt.Sprintf("key-%d", i))
	}
	for round := range 3 {
		for i := range n {
			h := hash(i)
			c := in.candidate(h)
			id, _ := in.lookup(key(i), h, c)
			if round == 0 && id != uint32(i) {
				t.Fatalf("first sight of key %d: id %d", i, id)
			}
			if id != uint32(i) {
				t.Fatalf("round %d: key %d has id %d", round, i, id)
			}
		}
	}
	if in.Len() != n {
		t.Errorf("Len = %d, want %d", in.Len(), n)
	}
	for i := range n {
		if got := string(in.key(uint32(i))); got != string(key(i)) {
			t.Errorf("key(%d) = %q", i, got)
		}
	}
	// A key longer than an arena chunk gets a chunk of its own.
	long := make([]byte, keyChunk+10)
	id, _ := in.lookup(long, 7, nil)
	if again, added := in.lookup(long, 7, nil); string(in.key(id)) != string(long) || again != id || added {
		t.Error("long key not kept")
	}
}

func TestInternSlotSize(t *testing.T) {
	// Eight to a cache line, so that no slot straddles two and a key's
	// slot costs little beside its bytes.
	if n := unsafe.Sizeof(internSlot{}); n != 8 {
		t.Errorf("internSlot is %d bytes, want 8", n)
	}
}

func TestBurstSlotSize(t *testing.T) {
	// Whole cache lines, so that a lane slot never shares one with
	// another's and the prefetch of its first line loads its header.
	if n := unsafe.Sizeof(laneRing{}); n != 128 {
		t.Errorf("laneRing is %d bytes, want 128", n)
	}
}

func TestHashKeySpreads(t *testing.T) {
	// Keys that differ in one byte, anywhere, land on different homes and
	// workers about evenly: count collisions of the high 16 bits and the
	// parity of the low bits over many near-identical keys.
	const n = 1 << 14
	homes := map[uint64]int{}
	odd := 0
	for i := range n {
		k := []byte(fmt.Sprintf("0000-%08d-0000", i))
		h := hashKey(k)
		homes[h>>48]++
		odd += int(h & 1)
	}
	if len(homes) < n/4 {
		t.Errorf("%d keys took only %d of 65536 high-16-bit homes", n, len(homes))
	}
	if odd < n*45/100 || odd > n*55/100 {
		t.Errorf("%d of %d hashes odd: the workers would be unbalanced", odd, n)
	}
	if hashKey(nil) == hashKey([]byte{0}) {
		t.Error("the empty key hashes like a zero byte")
	}
}

// TestHashKeyTails checks that keys of every length up to 40 that differ
// in one byte hash differently: the tail is read without a loop, in
// overlapping words, and must still cover every byte.
func TestHashKeyTails(t *testing.T) {
	for n := 1; n <= 40; n++ {
		base := make([]byte, n)
		for i := range base {
			base[i] = byte('a' + i)
		}
		h := hashKey(base)
		for i := range n {
			k := bytes.Clone(base)
			k[i] ^= 0x20
			if hashKey(k) == h {
				t.Errorf("length %d: changing byte %d leaves the hash %x", n, i, h)
			}
		}
	}
}

// TestInternerRecycles: a table grown out of becomes arena chunks, and
// every key, short (held in its ref) or long, keeps its id and bytes
// through it, through removals and the compaction they bring, and
// through ids reused.
func TestInternerRecycles(t *testing.T) {
	in := newInterner()
	key := func(i int) []byte { return []byte(fmt.Sprintf("key-%d-%s", i, bytes.Repeat([]byte{'x'}, i%23))) }
	const n = 200000 // past 99645 and 149467 keys, where tables of over 1 MiB are grown out of
	spared := false
	for i := range n {
		k := key(i)
		h := hashKey(k)
		id, added := in.lookup(k, h, in.candidate(h))
		if !added || id != uint32(i) {
			t.Fatalf("key %d: id %d, added %v", i, id, added)
		}
		spared = spared || len(in.spare) > 0
	}
	if !spared || len(in.spare) != 0 {
		t.Errorf("the grown-out table was not taken into the arena (spare seen %v, left %d)", spared, len(in.spare))
	}
	check := func(what string, live func(int) bool) {
		t.Helper()
		for i := range n {
			if !live(i) {
				continue
			}
			k := key(i)
			h := hashKey(k)
			id, added := in.lookup(k, h, in.candidate(h))
			if added || id != uint32(i) || !bytes.Equal(in.key(id), k) {
				t.Fatalf("%s: key %d: id %d, added %v, bytes %q", what, i, id, added, in.key(id))
			}
		}
	}
	check("after growing", func(int) bool { return true })
	bytesBefore := len(in.arena)
	for i := range n {
		if i%3 != 0 {
			in.remove(uint32(i))
		}
	}
	if len(in.arena) >= bytesBefore {
		t.Errorf("removing two keys in three did not compact the arena (%d chunks, %d before)", len(in.arena), bytesBefore)
	}
	check("after removals", func(i int) bool { return i%3 == 0 })
	reused := map[uint32]bool{}
	for i := range n {
		if i%3 == 0 {
			continue
		}
		k := key(n + i)
		h := hashKey(k)
		id, added := in.lookup(k, h, in.candidate(h))
		if !added || id >= n || id%3 == 0 || reused[id] {
			t.Fatalf("new key %d: id %d, added %v", n+i, id, added)
		}
		reused[id] = true
		if !bytes.Equal(in.key(id), k) {
			t.Fatalf("new key %d: bytes %q", n+i, in.key(id))
		}
	}
	check("after reuse", func(i int) bool { return i%3 == 0 })
	if in.Len() != n {
		t.Errorf("Len = %d, want %d", in.Len(), n)
	}
}

// TestInternerShortKeys: keys of up to seven bytes, held in their refs,
// are told apart from one another (a key and the same key with a zero
// byte more, every byte value) and from longer keys, keep their bytes,
// and take no arena bytes; removing and reusing their ids works as for
// long keys.
func TestInternerShortKeys(t *testing.T) {
	in := newInterner()
	var keys [][]byte
	for n := 0; n <= inlineKey+1; n++ {
		for _, c := range []byte{0, 1, 'a', 0x7f, 0x80, 0xff} {
			keys = append(keys, bytes.Repeat([]byte{c}, n))
			if n > 0 {
				k := bytes.Repeat([]byte{'z'}, n)
				k[n-1] = c
				keys = append(keys, k)
			}
		}
	}
	seen := map[string]uint32{}
	intern := func(k []byte) (uint32, bool) {
		h := hashKey(k)
		return in.lookup(k, h, in.candidate(h))
	}
	for _, k := range keys {
		id, added := intern(k)
		if want, ok := seen[string(k)]; ok {
			if added || id != want {
				t.Fatalf("%q again: id %d, added %v, want %d", k, id, added, want)
			}
			continue
		}
		if !added {
			t.Fatalf("%q: taken for a key met before (id %d, %q)", k, id, in.key(id))
		}
		seen[string(k)] = id
	}
	long := 0
	for k, id := range seen {
		if got := in.key(id); string(got) != k || len(got) != len(k) {
			t.Errorf("key %d: bytes %q, want %q", id, got, k)
		}
		if len(k) > inlineKey {
			long++
		}
	}
	if want := long * recordLen(inlineKey+1); in.bytes != want {
		t.Errorf("arena holds %d bytes, want %d (the long keys only)", in.bytes, want)
	}
	for k, id := range seen {
		if len(k)%2 == 0 {
			in.remove(id)
			delete(seen, k)
		}
	}
	for k, id := range seen {
		if got, added := intern([]byte(k)); added || got != id || string(in.key(id)) != k {
			t.Fatalf("%q after removals: id %d, added %v, bytes %q", k, got, added, in.key(got))
		}
	}
	for _, k := range [][]byte{[]byte("\x00\x00"), []byte("ab"), []byte("abcdefgh")} {
		id, added := intern(k)
		if !added || string(in.key(id)) != string(k) {
			t.Fatalf("%q after removals: id %d, added %v, bytes %q", k, id, added, in.key(id))
		}
	}
}

// TestInlineRef checks inlineRef's overlapping loads against the bytes
// placed one by one, for every length it takes, on random keys and keys
// whose bytes all differ.
func TestInlineRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for n := 0; n <= inlineKey; n++ {
		for trial := range 200 {
			key := make([]byte, n, n+trial%3) // spare capacity must not be read
			for i := range key {
				key[i] = byte(rng.Uint32())
				if trial == 0 {
					key[i] = byte(i + 1)
				}
			}
			want := uint64(inlined) | uint64(n)<<56
			for i, c := range key {
				want |= uint64(c) << (8 * i)
			}
			if got := inlineRef(key); uint64(got) != want {
				t.Fatalf("inlineRef(%x) = %#x, want %#x", key, uint64(got), want)
			}
		}
	}
}
