// Command bare is the reference of proxybench: goproxy with nothing of
// robotsproxy's but its outbound transport (proxy.NewTransport, private
// addresses allowed), listening on -listen and, with -ca-cert and
// -ca-key, intercepting CONNECT tunnels as robotsproxy does (a
// certificate per host from package mitm; HTTP/2 inside a tunnel when
// the client offers it). It prints "ADDR host:port" once it listens and
// serves until it is interrupted (SIGINT, SIGTERM).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/elazarl/goproxy"

	"github.com/robotsproxy/robotsproxy/internal/mitm"
	"github.com/robotsproxy/robotsproxy/proxy"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	caCert := flag.String("ca-cert", "", "CA certificate (PEM) of intercepted tunnels; none: tunnels are not intercepted")
	caKey := flag.String("ca-key", "", "the CA's key (PEM)")
	flag.Parse()

	gp := goproxy.NewProxyHttpServer()
	gp.Tr = proxy.NewTransport(proxy.TransportOptions{AllowPrivate: true})
	gp.ConnectDial, gp.ConnectDialWithReq = nil, nil
	gp.KeepAcceptEncoding = true
	gp.AllowHTTP2 = true // h2 inside intercepted tunnels, when the client offers it
	if *caCert != "" {
		ca, err := mitm.LoadCA(*caCert, *caKey)
		if err != nil {
			log.Fatal(err)
		}
		certs, err := mitm.NewCerts(ca, mitm.CertsOptions{})
		if err != nil {
			log.Fatal(err)
		}
		gp.OnRequest().HandleConnectFunc(func(host string, _ *goproxy.ProxyCtx) (*goproxy.ConnectAction, string) {
			return &goproxy.ConnectAction{Action: goproxy.ConnectMitm, TLSConfig: certs.TLSConfig}, host
		})
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Handler: gp}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("ADDR %s\n", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	_ = srv.Close()
}
