package report

import (
	"math"
	"math/bits"
)

// Distinct-count bounds. A distinct counter keeps the 64-bit hashes of the
// values it saw, exactly, up to its exact cap; past the cap it folds them
// into a HyperLogLog sketch of 2^p one-octet registers (Flajolet et al.,
// 2007, with the small-range correction), whose standard error is
// 1.04/sqrt(2^p): p=10 gives 3.3%, p=12 1.6%, p=14 0.8%.
const (
	distinctExactCap = 1 << 16 // per top-k table and the summary's hosts
	smallExactCap    = 256     // per token (hosts) and per host (robots.txt versions)
	smallHLLBits     = 10
)

// distinct counts distinct values in bounded memory: at most exactCap
// hashes (16 to 32 octets each: open addressing,
// at most half full), then 2^p octets.
type distinct struct {
	exactCap int
	p        uint8
	n        int
	set      []uint64 // open addressing; 0 marks an empty slot
	hll      []uint8
}

func newDistinct(exactCap int, p uint8) distinct {
	return distinct{exactCap: exactCap, p: p}
}

// heapBytes is the heap octets the counter owns.
func (d *distinct) heapBytes() int { return 8*cap(d.set) + cap(d.hll) }

func (d *distinct) addBytes(b []byte) { d.addHash(hash64(b)) }

func (d *distinct) addHash(h uint64) {
	if d.p == 0 { // the zero value: a small counter
		d.exactCap, d.p = smallExactCap, smallHLLBits
	}
	if d.hll != nil {
		d.hllAdd(h)
		return
	}
	if h == 0 {
		h = 1
	}
	if len(d.set) == 0 {
		d.set = make([]uint64, 8)
	}
	mask := uint64(len(d.set) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		switch d.set[i] {
		case h:
			return
		case 0:
			d.set[i] = h
			d.n++
			if d.n > d.exactCap {
				d.toHLL()
			} else if 2*d.n > len(d.set) {
				d.grow()
			}
			return
		}
	}
}

func (d *distinct) grow() {
	old := d.set
	d.set = make([]uint64, 2*len(old))
	mask := uint64(len(d.set) - 1)
	for _, h := range old {
		if h == 0 {
			continue
		}
		i := h & mask
		for d.set[i] != 0 {
			i = (i + 1) & mask
		}
		d.set[i] = h
	}
}

func (d *distinct) toHLL() {
	d.hll = make([]uint8, 1<<d.p)
	for _, h := range d.set {
		if h != 0 {
			d.hllAdd(h)
		}
	}
	d.set = nil
}

func (d *distinct) hllAdd(h uint64) {
	idx := h >> (64 - d.p)
	w := h<<d.p | 1<<(d.p-1) // the guard bit bounds rho
	if rho := uint8(bits.LeadingZeros64(w) + 1); rho > d.hll[idx] {
		d.hll[idx] = rho
	}
}

// count returns the number of distinct values and whether it is exact.
func (d *distinct) count() (uint64, bool) {
	if d.hll == nil {
		return uint64(d.n), true
	}
	m := float64(len(d.hll))
	sum, zeros := 0.0, 0
	for _, r := range d.hll {
		sum += math.Ldexp(1, -int(r))
		if r == 0 {
			zeros++
		}
	}
	e := 0.7213 / (1 + 1.079/m) * m * m / sum
	if e <= 2.5*m && zeros > 0 {
		e = m * math.Log(m/float64(zeros)) // small-range correction
	}
	return uint64(e + 0.5), false
}

// hash64 is FNV-1a followed by the murmur3 finalizer, so that every bit of
// the result depends on every input octet (HyperLogLog reads the top bits).
// It is deterministic: the same input gives the same report.
func hash64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return fmix64(h)
}

func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
