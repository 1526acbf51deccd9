// Package suggest finds the word a user most likely meant when they wrote
// one that is not known (a misspelt key, table or name), for the "did you
// mean …?" part of an error message. It is shared by the host's
// configuration checks and by PMs' own diagnostics, so that a typo is
// answered the same way everywhere.
//
// The rule: the candidate at the smallest edit distance (optimal string
// alignment: insertions, deletions, substitutions and swaps of two
// adjacent bytes, compared without regard to ASCII case) is suggested when
// that distance is at most a third of the word's length (at least 1), or
// when one of the two is a prefix of the other and the word is at least 3
// bytes long ("auto" for "auto-enable"). Otherwise nothing is suggested:
// a far-fetched guess misleads more than a list of the known words.
package suggest

import "strings"

// Closest returns the candidate word most likely meant by s under the
// package's rule, or "" when none is near enough. Among candidates at the
// same distance the first given wins.
func Closest(s string, candidates []string) string {
	best, bestD := "", 0
	ls := strings.ToLower(s)
	for _, c := range candidates {
		d := Distance(ls, strings.ToLower(c))
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	if bestD <= max(1, len(s)/3) || (len(s) >= 3 && (strings.HasPrefix(best, s) || strings.HasPrefix(s, best))) {
		return best
	}
	return ""
}

// Distance is the optimal string alignment distance between a and b, in
// bytes: the fewest insertions, deletions, substitutions and swaps of two
// adjacent bytes turning a into b (no substring edited twice). It is
// case-sensitive; Closest folds case before calling it. Its cost is
// len(a) × len(b).
func Distance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
