package channel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrAddressNotAllowed: a webhook URL resolved to an address of the platform's own network
// (loopback, private, link-local such as the cloud metadata endpoint 169.254.169.254,
// carrier-grade NAT, unspecified or multicast). Recipient URLs come from event data, so
// without this guard an event could make the platform POST into its own network (SSRF).
var ErrAddressNotAllowed = errors.New("webhook: the URL resolves to a non-public address")

// cgnat is 100.64.0.0/10 (RFC 6598), which netip does not call private.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// publicAddress reports whether ip may be dialled by a webhook.
func publicAddress(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsValid() && !ip.IsLoopback() && !ip.IsPrivate() && !ip.IsLinkLocalUnicast() &&
		!ip.IsLinkLocalMulticast() && !ip.IsInterfaceLocalMulticast() && !ip.IsMulticast() &&
		!ip.IsUnspecified() && !cgnat.Contains(ip)
}

// guardedTransport is http.DefaultTransport's behaviour with a dialer that refuses
// non-public addresses. The check runs on the address actually dialled (after DNS), so a
// name that resolves to an internal address — or is rebound to one — is refused too.
func guardedTransport() *http.Transport {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip, err := netip.ParseAddr(host)
			if err != nil || !publicAddress(ip) {
				return fmt.Errorf("%w (%s)", ErrAddressNotAllowed, host)
			}
			return nil
		}}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil // a proxy would dial on our behalf, past the guard
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}
	return t
}
