// Package strictjson holds the rules every JSON document taken from outside must follow
// beyond encoding/json's syntax: UTF-8 text, no member named twice in one object, and no
// lone UTF-16 surrogate escape. encoding/json accepts all three silently (invalid bytes and
// lone surrogates become U+FFFD, a repeated member's last value wins), so a document could
// say two things at once or be stored as something else than was sent. The management
// APIs (shared/httpapi) and CloudEvents parsing (shared/events) both apply it. Decode is
// the strict decoding of one value (no unknown member, nothing after it) the stages use for
// the messages and files they read.
package strictjson
