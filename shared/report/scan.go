package report

// maxScanPages bounds the store pages one call reads while it skips the rows its caller may
// not see (another business unit's), so a scope that sees few rows costs at most this many
// round trips; the caller answers with what it found and a cursor to go on from.
const maxScanPages = 10

// scanPages reads keyset pages in order, page() each (the caller's closure reads the cursor
// that each moves on; a page holds at most size rows), and hands every row to each, until
// each says stop, a page comes back short (ranOut: the rows are all read) or maxScanPages
// pages were read. The first error, of page or of each, ends the scan and is returned.
// Shared by the scoped lists (List, FailedRuns, ListRollouts) and Shadow's ownership read.
func scanPages[R any](size int, page func() ([]R, error), each func(R) (stop bool, err error)) (ranOut bool, err error) {
	for range maxScanPages {
		rows, err := page()
		if err != nil {
			return false, err
		}
		for _, r := range rows {
			if stop, err := each(r); stop || err != nil {
				return false, err
			}
		}
		if len(rows) < size {
			return true, nil
		}
	}
	return false, nil
}
