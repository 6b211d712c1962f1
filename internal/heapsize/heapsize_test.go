package heapsize

import "testing"

func TestAlloc(t *testing.T) {
	for _, tt := range []struct{ n, want int }{
		{0, 0}, {1, 8}, {8, 8}, {9, 16}, {33, 48}, {500, 512}, {513, 576}, {32768, 32768}, {32769, 40960}, {512 << 10, 512 << 10},
	} {
		if got := Alloc(tt.n); got != tt.want {
			t.Errorf("Alloc(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
	if got := Pointers(512); got != 512 {
		t.Errorf("Pointers(512) = %d, want 512 (no header)", got)
	}
	if got := Pointers(570); got != 640 {
		t.Errorf("Pointers(570) = %d, want 640 (570+8 rounds to 640)", got)
	}
	if got := Slice(3, 88, true); got != 288 {
		t.Errorf("Slice(3, 88, true) = %d, want 288", got)
	}
}
