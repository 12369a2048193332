package bus

// TakeWaiting returns the next message of q and up to n-1 more that are already waiting,
// without waiting for them: the messages a broker hands a consumer at once (a batch for
// delivery.Dispatcher.HandleBatch). It blocks only for the first message; ok is false when q
// is closed and empty. n below 1 is taken as 1.
func TakeWaiting(q <-chan Message, n int) (batch []Message, ok bool) {
	m, ok := <-q
	if !ok {
		return nil, false
	}
	batch = append(batch, m)
	for len(batch) < n {
		select {
		case m, ok := <-q:
			if !ok {
				return batch, true
			}
			batch = append(batch, m)
		default:
			return batch, true
		}
	}
	return batch, true
}
