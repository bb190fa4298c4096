package chaos

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/cloudnative-mysql/cloudnative-mysql/internal/specs"
)

// Observation is one poll of one instance. OK false: the instance did not answer in time.
type Observation struct {
	Instance      string    `json:"instance"`
	At            time.Time `json:"at"`
	OK            bool      `json:"ok"`
	ReadOnly      bool      `json:"readOnly,omitempty"`
	SuperReadOnly bool      `json:"superReadOnly,omitempty"`
	Server        string    `json:"server,omitempty"`
}

// Writable: the instance accepted writes from an ordinary account when it was read.
func (o Observation) Writable() bool { return o.OK && !o.ReadOnly }

// Addresses follows the Pod IP of every instance of the Cluster (a Pod deleted and created again
// gets another), refreshed from the API server every Refresh.
type Addresses struct {
	Env     *Env
	Target  Target
	Refresh time.Duration

	mu    sync.Mutex
	addrs map[string]string
}

// Run refreshes until ctx ends.
func (a *Addresses) Run(ctx context.Context) {
	for {
		if pods, err := a.Env.Pods(ctx, a.Target); err == nil {
			m := map[string]string{}
			for _, p := range pods {
				if p.Status.PodIP != "" {
					m[p.Name] = fmt.Sprintf("%s:%d", p.Status.PodIP, specs.MySQLPort)
				}
			}
			a.mu.Lock()
			a.addrs = m
			a.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(a.Refresh):
		}
	}
}

// Names returns the instances that have an address now.
func (a *Addresses) Names() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]string, 0, len(a.addrs))
	for n := range a.addrs {
		out = append(out, n)
	}
	return out
}

// Get returns the current address of an instance, "" when unknown.
func (a *Addresses) Get(instance string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.addrs[instance]
}

// Poller reads @@read_only, @@super_read_only and @@server_uuid of each instance through its own
// Pod IP every Interval, each instance on a connection of its own, and records every answer and
// every miss.
type Poller struct {
	Env       *Env
	Account   Account
	Addrs     *Addresses
	Instances []string
	Interval  time.Duration

	mu  sync.Mutex
	obs []Observation
}

// Run polls until ctx ends: Instances from the start, and every instance that appears later (one
// created to replace a diverged instance, say) from when its Pod has an address.
func (p *Poller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	polled := map[string]bool{}
	start := func(inst string) {
		if polled[inst] {
			return
		}
		polled[inst] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.poll(ctx, inst)
		}()
	}
	for _, inst := range p.Instances {
		start(inst)
	}
	for ctx.Err() == nil {
		for _, inst := range p.Addrs.Names() {
			start(inst)
		}
		select {
		case <-ctx.Done():
		case <-time.After(p.Interval):
		}
	}
	wg.Wait()
}

func (p *Poller) poll(ctx context.Context, instance string) {
	var c *conn
	addr := ""
	defer func() {
		if c != nil {
			c.close()
		}
	}()
	tick := time.NewTicker(p.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if now := p.Addrs.Get(instance); now != addr || c == nil {
			if c != nil {
				c.close()
				c = nil
			}
			addr = now
			if addr != "" {
				c, _ = p.Env.newConn(p.Account, addr, p.Interval*5)
			}
		}
		o := Observation{Instance: instance}
		if c != nil {
			qctx, cancel := context.WithTimeout(ctx, p.Interval*5)
			if sc, err := c.get(qctx); err == nil {
				err = sc.QueryRowContext(qctx, "SELECT @@global.read_only, @@global.super_read_only, @@server_uuid").
					Scan(&o.ReadOnly, &o.SuperReadOnly, &o.Server)
				o.OK = err == nil
			}
			cancel()
			if !o.OK {
				c.drop()
			}
		}
		o.At = time.Now()
		if ctx.Err() != nil {
			return
		}
		p.mu.Lock()
		p.obs = append(p.obs, o)
		p.mu.Unlock()
	}
}

// Observations copies the records.
func (p *Poller) Observations() []Observation {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Observation(nil), p.obs...)
}

// Read is one read through the -ro Service on a fresh connection.
type Read struct {
	At     time.Time `json:"at"`
	OK     bool      `json:"ok"`
	Server string    `json:"server,omitempty"`
}

// Reader reads through Addr (the -ro Service) every Interval, each time on a new connection, so
// each read exercises the Service's current endpoints.
type Reader struct {
	Env      *Env
	Account  Account
	Addr     string
	Interval time.Duration

	mu    sync.Mutex
	reads []Read
}

// Run reads until ctx ends.
func (r *Reader) Run(ctx context.Context) {
	tick := time.NewTicker(r.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rd := Read{}
		if c, err := r.Env.newConn(r.Account, r.Addr, time.Second); err == nil {
			qctx, cancel := context.WithTimeout(ctx, time.Second)
			if sc, err := c.get(qctx); err == nil {
				rd.OK = sc.QueryRowContext(qctx, "SELECT @@server_uuid").Scan(&rd.Server) == nil
			}
			cancel()
			c.close()
		}
		rd.At = time.Now()
		if ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		r.reads = append(r.reads, rd)
		r.mu.Unlock()
	}
}

// Reads copies the records.
func (r *Reader) Reads() []Read {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Read(nil), r.reads...)
}
