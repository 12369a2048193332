package automation

import "strings"

// Closest returns the option a mistyped name most likely meant, for a "did you mean"
// hint: an option equal to name ignoring case, else the one at the smallest edit distance
// (Levenshtein, on bytes) when that distance is at most 2 and less than half of name's
// length; "" when none is that close. Ties go to the earlier option.
func Closest(name string, options []string) string {
	for _, o := range options {
		if strings.EqualFold(o, name) {
			return o
		}
	}
	best, bestD := "", 3
	for _, o := range options {
		if d := editDistance(name, o, bestD); d < bestD && 2*d < len(name) {
			best, bestD = o, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, or limit when it is at least limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}
