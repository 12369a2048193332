// Package inbox is the in-app inbox (docs/inbox.md): the "inbox" delivery channel, which
// stores each message per recipient in SQL (store.InboxStore), the in-process Broker that
// fans stored messages out to live streams, and the Service behind the HTTP routes (list,
// mark read, stream with resume after a Last-Event-ID).
//
// Ordering: a recipient's messages carry Seq 1, 2, 3, … assigned in commit order, so a
// stream that has sent Seq n and reads "Seq > n" from SQL never misses or repeats one; live
// messages from the broker are only a faster path to the same sequence.
package inbox
