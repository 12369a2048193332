package report

import (
	"errors"
	"testing"
)

// scanPages reads pages until each stops it, a page is short or maxScanPages were read, and
// hands over every row of a page in order; an error of either side ends it.
func TestScanPagesStopsWhereTheListsNeedIt(t *testing.T) {
	// rows 1..n in pages of size from a cursor the each closure moves on, as the lists do.
	run := func(n, size, stopAt int, failAt int) (seen []int, pages int, ranOut bool, err error) {
		after := 0
		ranOut, err = scanPages(size, func() ([]int, error) {
			pages++
			if pages == failAt {
				return nil, errors.New("store down")
			}
			var rows []int
			for r := after + 1; r <= n && len(rows) < size; r++ {
				rows = append(rows, r)
			}
			return rows, nil
		}, func(r int) (bool, error) {
			after = r
			seen = append(seen, r)
			if r == -stopAt {
				return false, errors.New("bad row")
			}
			return r == stopAt, nil
		})
		return seen, pages, ranOut, err
	}
	if seen, pages, ranOut, err := run(7, 3, 0, 0); len(seen) != 7 || pages != 3 || !ranOut || err != nil {
		t.Errorf("short last page: seen %v in %d pages, ranOut %v, %v", seen, pages, ranOut, err)
	}
	if seen, pages, ranOut, err := run(6, 3, 0, 0); len(seen) != 6 || pages != 3 || !ranOut || err != nil {
		t.Errorf("empty last page: seen %v in %d pages, ranOut %v, %v", seen, pages, ranOut, err)
	}
	if seen, pages, ranOut, err := run(7, 3, 5, 0); len(seen) != 5 || pages != 2 || ranOut || err != nil {
		t.Errorf("each stops at 5: seen %v in %d pages, ranOut %v, %v", seen, pages, ranOut, err)
	}
	if seen, pages, ranOut, err := run(7, 3, 7, 0); len(seen) != 7 || pages != 3 || ranOut || err != nil {
		t.Errorf("each stops on the last row of a short page: seen %v in %d pages, ranOut %v (want false: the caller keeps its cursor), %v", seen, pages, ranOut, err)
	}
	if seen, pages, ranOut, err := run(1000, 2, 0, 0); len(seen) != 2*maxScanPages || pages != maxScanPages || ranOut || err != nil {
		t.Errorf("bounded: seen %d rows in %d pages, ranOut %v, %v", len(seen), pages, ranOut, err)
	}
	if seen, pages, ranOut, err := run(7, 3, 0, 2); len(seen) != 3 || pages != 2 || ranOut || err == nil {
		t.Errorf("page fails: seen %v in %d pages, ranOut %v, %v", seen, pages, ranOut, err)
	}
	if seen, pages, ranOut, err := run(7, 3, -4, 0); len(seen) != 4 || pages != 2 || ranOut || err == nil || err.Error() != "bad row" {
		t.Errorf("each fails: seen %v in %d pages, ranOut %v, %v", seen, pages, ranOut, err)
	}
}
