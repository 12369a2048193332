package campaign

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strconv"
)

// digest hashes the parts length-prefixed (no separator can make two tuples collide) and
// returns the first 40 hex digits (160 bits).
func digest(parts ...string) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))[:40]
}

// ExecutionID is the identity of one recipient's run of a campaign for one source event:
// "cx-" + 40 hex digits of (business unit, campaign, run, recipient, sourceEventKey), where
// sourceEventKey is the event's identity, events.Identity(source, id). A replayed or
// redelivered event gives the same id; a re-run (new runID) another; the same id from
// another source another.
func ExecutionID(businessUnitID, campaignID, runID, recipientID, sourceEventKey string) string {
	return "cx-" + digest("execution", businessUnitID, campaignID, runID, recipientID, sourceEventKey)
}

// CommandID is the identity of the command of action index (whose identity is key) in an
// execution: "{executionId}:{index}:{key}" (at most 3+40+1+2+1+64 characters).
func CommandID(executionID string, index int, key string) string {
	return executionID + ":" + strconv.Itoa(index) + ":" + key
}

// EffectKey is the provider idempotency key of that command: "ce-" + 40 hex digits of
// (execution, action index, key, type, provider). Every retry sends the same key.
func EffectKey(executionID string, index int, key, actionType, provider string) string {
	return "ce-" + digest("effect", executionID, strconv.Itoa(index), key, actionType, provider)
}
