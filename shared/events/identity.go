package events

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Identity is the internal identity of the event (source, id): "ev-" + 40 hex digits (160
// bits) of SHA-256 over "event", source and id, each prefixed with its length in 8 bytes, so
// no choice of characters in source or id can make two pairs collide ("a:b" + "c" and "a" +
// "b:c" are different inputs). CloudEvents: "Consumers MAY assume that Events with identical
// source and id are duplicates"; two producers may both send id "1". Every key derived from
// an ingested event uses it (docs/gateway.md#event-identity): the outbox MessageId
// "{identity}:{route}", the attribute engine's processed-event id and trigger ids, the
// campaign execution ids and the noti route's SchedulerKey. 43 characters, so a MessageId
// built from it fits Service Bus's 128.
func Identity(source, id string) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range [...]string{"event", source, id} {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return "ev-" + hex.EncodeToString(h.Sum(nil))[:40]
}
