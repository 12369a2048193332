package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// MaxAttachmentBytes bounds a file a channel attaches (10 MiB): larger files go as links.
const MaxAttachmentBytes = 10 << 20

// Attachment is a file a channel sends with the message (an e-mail attachment). Data is
// loaded by the dispatcher from the blob the payload names; it is never stored in SQL.
type Attachment struct {
	FileName    string
	ContentType string
	Data        []byte
}

// BlobReader reads the stored files attachments name (trace.Store's GetBlob: Azure Blob in
// Azure, the local trace folder embedded).
type BlobReader interface {
	GetBlob(ctx context.Context, name string) ([]byte, error)
}

// payloadAttachment is the part of a delivery payload that asks for an attachment:
// {"attachment": {"blobName", "fileName", "contentType", "sha256"}} (report subscriptions
// with delivery "attachment", docs/architecture.md#report-subscriptions).
type payloadAttachment struct {
	Attachment *struct {
		BlobName    string `json:"blobName"`
		FileName    string `json:"fileName"`
		ContentType string `json:"contentType"`
		SHA256      string `json:"sha256"`
	} `json:"attachment"`
}

// errNoAttachments: the payload asks for a file the channel cannot attach.
var errNoAttachments = errors.New("the channel cannot send attachments")

// attachments loads the file the payload names, if any, and checks it against the sha256
// recorded with the run. Errors: automation-invalid style permanent problems are returned
// as *attachmentError (the delivery fails for good); others (the blob store unavailable)
// are retryable.
func (d *Dispatcher) attachments(ctx context.Context, payloadJSON string, tr Traits) ([]Attachment, error) {
	if !strings.Contains(payloadJSON, `"attachment"`) {
		return nil, nil
	}
	var p payloadAttachment
	if err := json.Unmarshal([]byte(payloadJSON), &p); err != nil || p.Attachment == nil {
		return nil, nil
	}
	a := p.Attachment
	switch {
	case !tr.Attachments:
		return nil, &attachmentError{errNoAttachments}
	case d.Blobs == nil:
		return nil, &attachmentError{errors.New("no blob store configured to read attachments from")}
	case a.BlobName == "" || a.FileName == "":
		return nil, &attachmentError{errors.New("the payload's attachment names no blob or file name")}
	}
	data, err := d.Blobs.GetBlob(ctx, a.BlobName)
	if err != nil {
		return nil, fmt.Errorf("attachment %s: %w", a.BlobName, err)
	}
	if len(data) > MaxAttachmentBytes {
		return nil, &attachmentError{fmt.Errorf("attachment %s is %d bytes, more than %d: deliver it as a link", a.FileName, len(data), MaxAttachmentBytes)}
	}
	if a.SHA256 != "" {
		sum := sha256.Sum256(data)
		if !strings.EqualFold(hex.EncodeToString(sum[:]), a.SHA256) {
			return nil, &attachmentError{fmt.Errorf("attachment %s does not match the sha256 recorded with the run", a.BlobName)}
		}
	}
	ct := a.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	return []Attachment{{FileName: a.FileName, ContentType: ct, Data: data}}, nil
}

// attachmentError is a permanent attachment problem (retrying cannot fix it).
type attachmentError struct{ err error }

func (e *attachmentError) Error() string { return "attachment: " + e.err.Error() }
func (e *attachmentError) Unwrap() error { return e.err }
