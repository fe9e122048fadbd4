// A load process for bench/watch-fanout written in Go, as the reference clients were: it
// holds `count` watch streams and speaks the same protocol over the Node IPC channel its parent
// opened (NODE_CHANNEL_FD, one JSON message per line) as bench/watch-client.ts does. It counts
// events without parsing them (newlines for JSON, length prefixes for protobuf frames), counts
// bytes, and reads one event in `sampleEvery` for commit-to-receipt latency from the
// `bench.orch.io/sent` annotation. It uses a fraction of the Node client's CPU, so on a small
// machine the server, not the load, is what the figures describe.
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type start struct {
	URL         string   `json:"url"`
	Count       int      `json:"count"`
	CA          string   `json:"ca"`
	Cert        string   `json:"cert"`
	Key         string   `json:"key"`
	SampleEvery int64    `json:"sampleEvery"`
	Forms       []string `json:"forms"`
	H2Sessions  int      `json:"h2Sessions"`
}

var accept = map[string]string{
	"json":     "application/json",
	"protobuf": "application/vnd.kubernetes.protobuf;stream=watch",
	"table":    "application/json;as=Table;g=meta.k8s.io;v=v1",
}

var (
	events    atomic.Int64
	received  atomic.Int64
	sample    atomic.Int64
	open      atomic.Int64
	perStream []atomic.Int64
	mu        sync.Mutex
	latencies = []int64{}
	sampledAt = []int64{}
	marks     = []int64{}
	cfg       start
)

var jsonMarker = []byte(`"bench.orch.io/sent":"`)
var protoMarker = []byte("bench.orch.io/sent")

func sampleLatency(event []byte, protobuf bool) {
	marker := jsonMarker
	if protobuf {
		marker = protoMarker
	}
	at := bytes.Index(event, marker)
	if at < 0 {
		return
	}
	var digits []byte
	if protobuf {
		from := at + len(protoMarker) + 2
		if from > len(event) {
			return
		}
		to := from + int(event[from-1])
		if to > len(event) {
			return
		}
		digits = event[from:to]
	} else {
		from := at + len(jsonMarker)
		end := bytes.IndexByte(event[from:], '"')
		if end < 0 {
			return
		}
		digits = event[from : from+end]
	}
	sent, err := strconv.ParseInt(string(digits), 10, 64)
	if err != nil {
		return
	}
	now := time.Now().UnixMilli()
	mu.Lock()
	latencies = append(latencies, now-sent)
	sampledAt = append(sampledAt, now)
	mu.Unlock()
}

// counted wraps a body, counting the bytes read from it.
type counted struct{ r io.Reader }

func (c counted) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	received.Add(int64(n))
	return n, err
}

func readJSON(stream int, body io.Reader) {
	r := bufio.NewReaderSize(counted{body}, 256*1024)
	var long []byte
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, line...)
			continue
		}
		if err != nil {
			return
		}
		events.Add(1)
		perStream[stream].Add(1)
		if sample.Add(1)%cfg.SampleEvery == 0 {
			if long != nil {
				sampleLatency(append(long, line...), false)
			} else {
				sampleLatency(line, false)
			}
		}
		long = nil
	}
}

func readProtobuf(stream int, body io.Reader) {
	r := bufio.NewReaderSize(counted{body}, 256*1024)
	header := make([]byte, 4)
	frame := make([]byte, 0, 64*1024)
	for {
		if _, err := io.ReadFull(r, header); err != nil {
			return
		}
		size := int(binary.BigEndian.Uint32(header))
		events.Add(1)
		perStream[stream].Add(1)
		if sample.Add(1)%cfg.SampleEvery == 0 {
			if cap(frame) < size {
				frame = make([]byte, size)
			}
			frame = frame[:size]
			if _, err := io.ReadFull(r, frame); err != nil {
				return
			}
			sampleLatency(frame, true)
		} else if _, err := r.Discard(size); err != nil {
			return
		}
	}
}

func watch(client *http.Client, form string, stream int) error {
	req, err := http.NewRequest("GET", cfg.URL, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", accept[form])
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	if res.StatusCode != 200 {
		res.Body.Close()
		return fmt.Errorf("watch answered %d", res.StatusCode)
	}
	open.Add(1)
	go func() {
		defer open.Add(-1)
		defer res.Body.Close()
		if form == "protobuf" {
			readProtobuf(stream, res.Body)
		} else {
			readJSON(stream, res.Body)
		}
	}()
	return nil
}

func transport(h2 bool) *http.Transport {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(cfg.CA))
	pair, err := tls.X509KeyPair([]byte(cfg.Cert), []byte(cfg.Key))
	if err != nil {
		fail(err)
	}
	t := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}},
		MaxIdleConnsPerHost: cfg.Count,
		ForceAttemptHTTP2:   h2,
		DisableCompression:  true,
	}
	if !h2 {
		// an empty map turns HTTP/2 off: one HTTP/1.1 connection per stream
		t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return t
}

var ipcOut *os.File
var ipcMu sync.Mutex

func send(m map[string]any) {
	b, _ := json.Marshal(m)
	ipcMu.Lock()
	defer ipcMu.Unlock()
	ipcOut.Write(append(b, '\n'))
}

func fail(err error) {
	if ipcOut != nil {
		send(map[string]any{"t": "error", "error": err.Error()})
	}
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func cpuMs() float64 {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return float64(u.Utime.Nano()+u.Stime.Nano()) / 1e6
}

func main() {
	fd, err := strconv.Atoi(os.Getenv("NODE_CHANNEL_FD"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "start me from bench/watch-fanout (NODE_CHANNEL_FD is not set)")
		os.Exit(2)
	}
	ipc := os.NewFile(uintptr(fd), "ipc")
	ipcOut = ipc
	in := bufio.NewScanner(ipc)
	in.Buffer(make([]byte, 1024*1024), 64*1024*1024)
	if !in.Scan() {
		os.Exit(1)
	}
	if err := json.Unmarshal(in.Bytes(), &cfg); err != nil {
		fail(err)
	}
	if len(cfg.Forms) == 0 {
		cfg.Forms = []string{"json"}
	}
	if cfg.SampleEvery <= 0 {
		cfg.SampleEvery = 20
	}
	perStream = make([]atomic.Int64, cfg.Count)
	cpuStart := cpuMs()
	clients := []*http.Client{}
	if cfg.H2Sessions > 0 {
		// one transport per session: each keeps its own HTTP/2 connection, as separate client-go processes would
		for s := 0; s < cfg.H2Sessions; s++ {
			clients = append(clients, &http.Client{Transport: transport(true)})
		}
	} else {
		clients = append(clients, &http.Client{Transport: transport(false)})
	}
	for i := 0; i < cfg.Count; i += 50 {
		var wg sync.WaitGroup
		errs := make(chan error, 50)
		for j := i; j < i+50 && j < cfg.Count; j++ {
			wg.Add(1)
			go func(n int) {
				defer wg.Done()
				if err := watch(clients[n%len(clients)], cfg.Forms[n%len(cfg.Forms)], n); err != nil {
					errs <- err
				}
			}(j)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			fail(err)
		}
	}
	send(map[string]any{"t": "ready", "open": open.Load()})
	for in.Scan() {
		var m struct {
			T string `json:"t"`
		}
		json.Unmarshal(in.Bytes(), &m)
		switch m.T {
		case "reset":
			events.Store(0)
			received.Store(0)
			for i := range perStream {
				perStream[i].Store(0)
			}
			mu.Lock()
			latencies, sampledAt, marks = latencies[:0], sampledAt[:0], marks[:0]
			mu.Unlock()
		case "mark":
			mu.Lock()
			marks = append(marks, events.Load())
			mu.Unlock()
		case "count":
			fewest := int64(-1)
			for i := range perStream {
				if v := perStream[i].Load(); fewest < 0 || v < fewest {
					fewest = v
				}
			}
			if fewest < 0 {
				fewest = 0
			}
			send(map[string]any{"t": "count", "events": events.Load(), "fewest": fewest})
		case "report":
			counts := make([]int64, len(perStream))
			for i := range perStream {
				counts[i] = perStream[i].Load()
			}
			mu.Lock()
			send(map[string]any{"t": "report", "events": events.Load(), "perStream": counts, "bytes": received.Load(),
				"latencies": latencies, "sampledAt": sampledAt, "open": open.Load(), "marks": marks, "cpuMs": cpuMs() - cpuStart})
			mu.Unlock()
			os.Exit(0)
		}
	}
}
