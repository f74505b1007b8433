package chunk

import (
	"reflect"
	"runtime"
	"testing"
)

func TestArray(t *testing.T) {
	var a Array[int64]
	if a.Get(5) != nil {
		t.Fatal("Get on an empty array returned an element")
	}
	for _, id := range []uint64{0, 1, Size - 1, Size, 5*Size + 3} {
		*a.At(id) = int64(id) + 1
	}
	for _, id := range []uint64{0, 1, Size - 1, Size, 5*Size + 3} {
		if p := a.Get(id); p == nil || *p != int64(id)+1 {
			t.Errorf("element %d lost", id)
		}
	}
	if p := a.Get(2 * Size); p == nil || *p != 0 {
		t.Error("an element never written is not zero")
	}
	if a.Get(6*Size) != nil {
		t.Error("Get past the end returned an element")
	}
	var seen, sum int64
	a.Drop(func(p *int64) { seen++; sum += *p })
	if want := int64(6 * Size); seen != want {
		t.Errorf("Drop visited %d elements, want the %d the array grew to", seen, want)
	}
	if want := int64(1 + 2 + Size + Size + 1 + 5*Size + 4); sum != want {
		t.Errorf("Drop saw elements summing to %d, want %d", sum, want)
	}
	if a.Get(0) != nil {
		t.Error("the array still has elements after Drop")
	}
}

// TestBlocksKeepPointers checks that the garbage collector sees the
// pointers held in blocks of a type built at run time.
func TestBlocksKeepPointers(t *testing.T) {
	typ := reflect.StructOf([]reflect.StructField{
		{Name: "N", Type: reflect.TypeFor[int64]()},
		{Name: "P", Type: reflect.TypeFor[*[64]byte]()},
	})
	type block struct {
		N int64
		P *[64]byte
	}
	b := NewBlocks(typ)
	if b.Size() != typ.Size() {
		t.Fatalf("Size %d, want %d", b.Size(), typ.Size())
	}
	ids := []uint32{0, 7, Size + 1, 3 * Size}
	for _, id := range ids {
		p := (*block)(b.At(id))
		p.N = int64(id)
		p.P = new([64]byte)
		p.P[0] = byte(id)
	}
	runtime.GC()
	runtime.GC()
	// Fresh allocations would reuse freed memory and overwrite it.
	for range 1000 {
		x := new([64]byte)
		for i := range x {
			x[i] = 0xff
		}
		runtime.KeepAlive(x)
	}
	for _, id := range ids {
		p := (*block)(b.Get(id))
		if p == nil || p.N != int64(id) || p.P == nil || p.P[0] != byte(id) || p.P[1] != 0 {
			t.Errorf("block %d lost its contents", id)
		}
	}
	// Only the chunks asked for are allocated.
	if b.Get(2*Size) != nil || b.Get(5*Size) != nil {
		t.Error("Get returned an element of a chunk never grown")
	}
}
