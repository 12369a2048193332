package delivery_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"testing"

	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

type blobMap struct {
	mu   sync.Mutex
	data map[string][]byte
	down bool
}

func (b *blobMap) GetBlob(_ context.Context, name string) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.down {
		return nil, errors.New("blob service unavailable")
	}
	d, ok := b.data[name]
	if !ok {
		return nil, errors.New("no blob " + name)
	}
	return d, nil
}

func TestAttachmentsAreLoadedCheckedAndOnlyForChannelsThatSendThem(t *testing.T) {
	t.Parallel()
	file := []byte("businessUnitId,sent\nbu-syd,12\n")
	sum := sha256.Sum256(file)
	blobs := &blobMap{data: map[string][]byte{"reports/r1/ab/activity.csv": file}}
	mail := &provider{}
	hook := &provider{}
	e := newEnv(t, map[string]delivery.Channel{
		"email":   &testChannel{p: mail, traits: delivery.Traits{Attachments: true}},
		"webhook": &testChannel{p: hook},
	})
	e.disp.Blobs = blobs
	payload := func(hash string) map[string]any {
		return map[string]any{"attachment": map[string]any{"blobName": "reports/r1/ab/activity.csv", "fileName": "activity.csv",
			"contentType": "text/csv", "sha256": hash}}
	}

	// Sent with the file on the channel that attaches; refused for good on the other.
	keys := e.queue(t, payload(hex.EncodeToString(sum[:])), "email", "ops@example.test", "webhook", "hook@example.test")
	e.pump(t)
	if j := e.job(t, keys[0]); j.Status != store.NotificationSent || len(mail.got) != 1 || len(mail.got[0].Attachments) != 1 ||
		string(mail.got[0].Attachments[0].Data) != string(file) || mail.got[0].Attachments[0].FileName != "activity.csv" {
		t.Fatalf("email job %s, got %+v", j.Status, mail.got)
	}
	if j := e.job(t, keys[1]); j.Status != store.NotificationFailed || hook.calls != 0 {
		t.Fatalf("webhook job %s (%s), calls %d", j.Status, j.LastError, hook.calls)
	}

	// A file that is not the one recorded with the run is never sent.
	bad := e.queue(t, payload("00"+hex.EncodeToString(sum[1:])), "email", "ops2@example.test")
	e.pump(t)
	if j := e.job(t, bad[0]); j.Status != store.NotificationFailed || len(mail.got) != 1 {
		t.Fatalf("sha mismatch: job %s (%s), sent %d", j.Status, j.LastError, len(mail.got))
	}

	// The blob store being down is transient: retried, nothing sent meanwhile.
	blobs.mu.Lock()
	blobs.down = true
	blobs.mu.Unlock()
	later := e.queue(t, payload(hex.EncodeToString(sum[:])), "email", "ops3@example.test")
	e.pump(t)
	if j := e.job(t, later[0]); j.Status != store.NotificationQueued || j.NextAttemptOn == nil || len(mail.got) != 1 {
		t.Fatalf("blob store down: job %s next %v, sent %d", j.Status, j.NextAttemptOn, len(mail.got))
	}
}
