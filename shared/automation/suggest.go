package automation

import "strings"

// Suggest returns the known name a mistyped name most likely meant, for a "did you mean" in
// an error: one that differs only in case, else the one at the smallest edit distance
// (Levenshtein, by runes, ignoring case) when that distance is at most 2 and less than half
// of name's length; the first in known order on a tie. "" when nothing is that close, or
// name is known as it is.
func Suggest(name string, known []string) string {
	for _, k := range known {
		if k == name {
			return ""
		}
	}
	for _, k := range known {
		if strings.EqualFold(k, name) {
			return k
		}
	}
	n := len([]rune(name))
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(name), strings.ToLower(k), bestD); d < bestD && 2*d < n {
			best, bestD = k, d
		}
	}
	return best
}

// DidYouMean is Suggest as a sentence tail: ` (did you mean "X"?)`, or "".
func DidYouMean(name string, known []string) string {
	if s := Suggest(name, known); s != "" {
		return ` (did you mean "` + s + `"?)`
	}
	return ""
}

// editDistance is the Levenshtein distance of a and b by runes, or limit when it is at least
// limit (a length gap of limit or more answers at once).
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
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
	return min(prev[len(rb)], limit)
}
