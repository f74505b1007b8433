package presets

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The layout of nginx's shared memory on 64-bit Linux with 4 KiB pages,
// as ngx_slab.c lays out a zone: the pool header, then a slot list and a
// statistics entry for each of the 9 size classes from 8 bytes to 2 KiB,
// then a page descriptor per page, then the pages, aligned to a page.
const (
	nginxPage      = 4096
	nginxPoolSize  = 200 // sizeof(ngx_slab_pool_t)
	nginxSlots     = 9   // ngx_pagesize_shift - min_shift: classes 8 ... 2048
	nginxSlotBytes = 24 + 32
	nginxPageDesc  = 24 // sizeof(ngx_slab_page_t)
	nginxMaxSlab   = nginxPage / 2
	nginxExact     = 64 // ngx_slab_exact_size: the bitmap fits the page descriptor
	// nginxShctx is sizeof(ngx_http_limit_req_shctx_t), the zone's tree and
	// queue; nginxNode the fixed part of a node: ngx_rbtree_node_t up to
	// its color and ngx_http_limit_req_node_t up to its key.
	nginxShctx = 80
	nginxNode  = 32 + 48
)

// ZoneNodes returns how many keys' states an nginx limit_req zone holds:
// zone is limit_req_zone's zone= value, NAME:SIZE (or the SIZE alone,
// named "one"), SIZE in bytes or with k or m as nginx reads it, and
// keyBytes the length of every key. It lays out the zone as nginx 1.22's
// slab allocator does on 64-bit Linux: the zone's own tree and the
// name of its log messages take their slots, then nodes of 80+keyBytes
// bytes, rounded up to a power of two, fill what is left. A size below 8
// pages is an error, as nginx refuses it.
func ZoneNodes(zone string, keyBytes int64) (int64, error) {
	name, sizeText, ok := strings.Cut(zone, ":")
	if !ok {
		name, sizeText = "one", zone
	}
	if name == "" || len(name) > 1000 {
		return 0, fmt.Errorf("zone %q: want a name of 1 to 1000 bytes before ':'", zone)
	}
	size, err := nginxSize(sizeText)
	if err != nil {
		return 0, fmt.Errorf("zone %q: %v", zone, err)
	}
	if size < 8*nginxPage {
		return 0, fmt.Errorf("zone %q is too small: nginx wants at least 32k", zone)
	}
	node := nginxNode + keyBytes
	if keyBytes < 1 || node > nginxMaxSlab {
		return 0, fmt.Errorf("key_bytes %d: want 1 to %d (keys whose nodes take whole pages are not modelled)", keyBytes, nginxMaxSlab-nginxNode)
	}
	// ngx_slab_init.
	avail := size - nginxPoolSize - nginxSlots*nginxSlotBytes
	pages := avail / (nginxPage + nginxPageDesc)
	start := (nginxPoolSize + nginxSlots*nginxSlotBytes + pages*nginxPageDesc + nginxPage - 1) / nginxPage * nginxPage
	if m := pages - (size-start)/nginxPage; m > 0 {
		pages -= m
	}
	// ngx_http_limit_req_init_zone allocates the tree and the log text
	// " in limit_req zone \"NAME\"" before any node.
	class := slabClass(node)
	byClass := map[int64]int64{}
	for _, alloc := range []int64{nginxShctx, int64(len(` in limit_req zone ""`)) + 1 + int64(len(name))} {
		byClass[slabClass(alloc)]++
	}
	var others, shared int64
	for c, n := range byClass {
		switch {
		case c == class:
			shared += n // slots of the nodes' own pages
		case c > nginxMaxSlab:
			others += n * ((c + nginxPage - 1) / nginxPage)
		default:
			others += (n + slabPerPage(c) - 1) / slabPerPage(c)
		}
	}
	nodes := (pages-others)*slabPerPage(class) - shared
	if nodes < 1 {
		return 0, fmt.Errorf("zone %q holds no node of %d bytes", zone, node)
	}
	return nodes, nil
}

// nginxSize is ngx_parse_size: a whole number of bytes, or of KiB or MiB
// with k or m.
func nginxSize(s string) (int64, error) {
	scale := int64(1)
	switch {
	case strings.HasSuffix(s, "k") || strings.HasSuffix(s, "K"):
		scale, s = 1024, s[:len(s)-1]
	case strings.HasSuffix(s, "m") || strings.HasSuffix(s, "M"):
		scale, s = 1024*1024, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || s == "" || s[0] == '+' {
		return 0, fmt.Errorf("invalid zone size: want bytes, or k or m")
	}
	if n > math.MaxInt64/scale {
		return 0, fmt.Errorf("the size is out of range")
	}
	return n * scale, nil
}

// slabClass returns the slab class an allocation of size bytes takes: the
// next power of two, at least 8.
func slabClass(size int64) int64 {
	c := int64(8)
	for c < size {
		c *= 2
	}
	return c
}

// slabPerPage returns how many allocations of class c a page holds: below
// the exact size the page's first slots hold its bitmap.
func slabPerPage(c int64) int64 {
	n := nginxPage / c
	if c < nginxExact {
		bitmap := max(n/(c*8), 1)
		return n - bitmap
	}
	return n
}
