// Command coredns is the local cluster's DNS: CoreDNS with only the plugins its Corefile uses
// (bind, errors, cache, kubernetes), run by hack/localcluster.sh in the node's network namespace.
package main

import (
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"

	"github.com/coredns/coredns/coremain"
)

func main() {
	coremain.Run()
}
