package instance

import (
	"crypto/tls"
	"net/http"
	"time"
)

// serverTimeouts bound how long one client may hold a connection of a server of the instance
// manager: a client that sends its headers or body slowly, or keeps an idle connection open, is
// cut off instead of holding a goroutine and a socket for ever.
type serverTimeouts struct {
	ReadHeader, Read, Write, Idle time.Duration
}

// controlAPITimeouts: the operator's and the peers' requests are small and answered from
// memory or one status query; a semi-sync change waits for at most one SQL round trip. (The
// probe server's are probes.ServerTimeouts.)
var controlAPITimeouts = serverTimeouts{ReadHeader: 5 * time.Second, Read: 10 * time.Second,
	Write: 30 * time.Second, Idle: time.Minute}

// newHTTPServer returns a server of h with the timeouts t; tlsCfg nil serves plain HTTP.
func newHTTPServer(h http.Handler, tlsCfg *tls.Config, t serverTimeouts) *http.Server {
	return &http.Server{Handler: h, TLSConfig: tlsCfg, ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout: t.Read, WriteTimeout: t.Write, IdleTimeout: t.Idle}
}
