package pmtest

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// netwatch is a loopback TCP listener posing as an HTTP proxy: it records
// every connection made to it, with the first line sent, and refuses them.
type netwatch struct {
	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	seen []string
}

func newNetwatch() (*netwatch, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening on loopback: %w", err)
	}
	w := &netwatch{ln: ln}
	w.wg.Add(1)
	go w.serve()
	return w, nil
}

// url is the proxy URL to hand out.
func (w *netwatch) url() string { return "http://" + w.ln.Addr().String() }

// proxyEnv is the proxy configuration pointing at the watcher, in the
// spellings the usual HTTP clients and ecosystem tools read.
func (w *netwatch) proxyEnv() map[string]string {
	u := w.url()
	env := map[string]string{"NO_PROXY": "", "no_proxy": ""}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy",
		"npm_config_proxy", "npm_config_https_proxy"} {
		env[k] = u
	}
	return env
}

func (w *netwatch) serve() {
	defer w.wg.Done()
	for {
		c, err := w.ln.Accept()
		if err != nil {
			return
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer c.Close()
			c.SetDeadline(time.Now().Add(time.Second))
			line, _ := bufio.NewReader(c).ReadString('\n')
			line = strings.TrimSpace(line)
			if line == "" {
				line = "(a connection that sent no request line)"
			} else if len(line) > 120 {
				line = line[:120] + "…"
			}
			w.mu.Lock()
			w.seen = append(w.seen, line)
			w.mu.Unlock()
			fmt.Fprint(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		}()
	}
}

// close stops listening, after accepting what is already queued, and returns
// the connections seen.
func (w *netwatch) close() []string {
	time.Sleep(50 * time.Millisecond)
	w.ln.Close()
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}
