package delivery

// RelayTracking reports the sizes of a relay's in-process bookkeeping (MarkOnSettle):
// messages published and not settled, rows not wholly settled, rows tracked under a claim,
// claims counted, rows settled and not marked. Tests only: it must drain to zero.
func RelayTracking(r *Relay) (inflight, unsettled, claimOf, claimRows, settled int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.inflight), len(r.unsettled), len(r.claimOf), len(r.claimRows), len(r.settled)
}
