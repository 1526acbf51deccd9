package benchkit

import (
	"slices"
	"testing"
)

// TestRoundOrder: every round runs each variant once, and over n rounds
// each variant runs first once.
func TestRoundOrder(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		first := map[int]int{}
		for r := range n {
			order := roundOrder(r, n)
			sorted := slices.Sorted(slices.Values(order))
			for i, v := range sorted {
				if v != i {
					t.Fatalf("n=%d round %d: order %v is not a permutation", n, r, order)
				}
			}
			first[order[0]]++
		}
		for i := range n {
			if first[i] != 1 {
				t.Errorf("n=%d: variant %d ran first in %d of %d rounds, want 1", n, i, first[i], n)
			}
		}
	}
}
