package redisserver

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

// A Redis Cluster has this many hash slots.
const clusterSlots = 16384

// ClusterConfig describes a managed Redis Cluster (--redis cluster). The zero value is
// usable: 3 masters, no replicas, persistence off.
type ClusterConfig struct {
	// Binary is the redis-server to run (as Config.Binary).
	Binary string
	// Masters is the number of masters, the slots split evenly between them (default 3).
	Masters int
	// Replicas is the number of replicas per master (default 0). Failover needs one, and at
	// least 3 masters to elect it.
	Replicas int
	// Persist is every node's append-only file setting (as Config.Persist).
	Persist string
	// TempDir is where the nodes' working directories are created (default os.TempDir()).
	TempDir string
	// StartTimeout bounds each node's start, and the wait for the cluster to agree (default 10s;
	// at least 30s for that wait).
	StartTimeout time.Duration
	// NodeTimeout is cluster-node-timeout: how long a master must be unreachable before its
	// replica takes over (default 2s).
	NodeTimeout time.Duration
	// Host is the address every node binds and announces (default 127.0.0.1): another
	// host's address for a cluster that processes on other machines share. Password-protected
	// either way; reachable by whoever can reach that address.
	Host string
}

// Cluster is a running Redis Cluster of temporary redis-servers on loopback, each a Server
// (own session, password in its configuration file, watchdog), sharing one random password
// (also their masterauth).
type Cluster struct {
	cfg      ClusterConfig
	password string

	mu      sync.Mutex // serializes Failover, Reshard and Stop
	nodes   []*clusterNode
	masters []*clusterNode // the current master of each shard
	owner   [clusterSlots]int
	stopped bool
}

// clusterNode is one redis-server of a Cluster.
type clusterNode struct {
	srv    *Server
	id     string
	shard  int // the index of the master it serves (or is)
	client *redis.Client
}

// liveClusters holds the clusters StopAll stops.
var liveClusters serverproc.Registry[*Cluster]

// StartCluster starts Masters masters and Replicas replicas of each, assigns the slots
// (CLUSTER ADDSLOTSRANGE), joins them (CLUSTER MEET, CLUSTER REPLICATE) and waits until every
// node reports cluster_state:ok and they all agree on the slot map. On any error nothing is
// left running or on disk.
func StartCluster(ctx context.Context, cfg ClusterConfig) (*Cluster, error) {
	bin, err := FindBinary(cfg.Binary)
	if err != nil {
		return nil, err
	}
	if cfg.Masters == 0 {
		cfg.Masters = 3
	}
	if cfg.Masters < 1 || cfg.Masters > 64 || cfg.Replicas < 0 || cfg.Replicas > 4 {
		return nil, fmt.Errorf("a cluster of %d masters with %d replicas each: want 1–64 masters and 0–4 replicas", cfg.Masters, cfg.Replicas)
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 10 * time.Second
	}
	if cfg.NodeTimeout == 0 {
		cfg.NodeTimeout = 2 * time.Second
	}
	c := &Cluster{cfg: cfg, password: serverproc.RandomHex(16)}
	liveClusters.Add(c)
	if err := c.start(ctx, bin); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, bin string) error {
	opts := &nodeOptions{password: c.password, nodeTimeout: c.cfg.NodeTimeout, host: c.cfg.Host}
	nodeCfg := Config{Persist: c.cfg.Persist, TempDir: c.cfg.TempDir, StartTimeout: c.cfg.StartTimeout}
	for i := 0; i < c.cfg.Masters*(1+c.cfg.Replicas); i++ {
		srv, err := start(ctx, bin, nodeCfg, opts)
		if err != nil {
			return fmt.Errorf("starting cluster node %d: %w", i, err)
		}
		n := &clusterNode{srv: srv, shard: i % c.cfg.Masters}
		n.client = c.nodeClient(srv.Addr())
		c.nodes = append(c.nodes, n)
		if i < c.cfg.Masters {
			c.masters = append(c.masters, n)
		}
		if n.id, err = n.client.Do(ctx, "cluster", "myid").Text(); err != nil {
			return fmt.Errorf("cluster node %s: CLUSTER MYID: %w", srv.Addr(), err)
		}
	}
	for i, m := range c.masters {
		lo, hi := i*clusterSlots/len(c.masters), (i+1)*clusterSlots/len(c.masters)-1
		if err := m.client.ClusterAddSlotsRange(ctx, lo, hi).Err(); err != nil {
			return fmt.Errorf("cluster node %s: CLUSTER ADDSLOTSRANGE %d %d: %w", m.srv.Addr(), lo, hi, err)
		}
		for s := lo; s <= hi; s++ {
			c.owner[s] = i
		}
	}
	first := c.nodes[0]
	for _, n := range c.nodes[1:] {
		if err := first.client.Do(ctx, "cluster", "meet", n.srv.host(), n.srv.port, n.srv.busPort).Err(); err != nil {
			return fmt.Errorf("CLUSTER MEET %s: %w", n.srv.Addr(), err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, c.agreeTimeout())
	defer cancel()
	if err := c.waitAllKnown(wctx); err != nil {
		return err
	}
	for _, n := range c.nodes[c.cfg.Masters:] {
		if err := n.client.Do(wctx, "cluster", "replicate", c.masters[n.shard].id).Err(); err != nil {
			return fmt.Errorf("cluster node %s: CLUSTER REPLICATE: %w", n.srv.Addr(), err)
		}
	}
	return c.waitHealthy(wctx)
}

func (c *Cluster) agreeTimeout() time.Duration { return max(30*time.Second, c.cfg.StartTimeout) }

// nodeClient is a client of one node, for control (no retries).
func (c *Cluster) nodeClient(addr string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, Password: c.password, MaxRetries: -1, PoolSize: 2, DialTimeout: time.Second})
}

// waitAllKnown waits until every node knows every other one, handshakes done.
func (c *Cluster) waitAllKnown(ctx context.Context) error {
	return poll(ctx, "every node to know every other (CLUSTER MEET)", func() error {
		for _, n := range c.nodes {
			out, err := n.client.ClusterNodes(ctx).Result()
			if err != nil {
				return fmt.Errorf("%s: %w", n.srv.Addr(), err)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != len(c.nodes) || strings.Contains(out, "handshake") || strings.Contains(out, "noaddr") {
				return fmt.Errorf("%s knows %d of %d nodes", n.srv.Addr(), len(lines), len(c.nodes))
			}
		}
		return nil
	})
}

// poll calls check every 50ms until it returns nil or ctx ends (then its last error).
func poll(ctx context.Context, what string, check func() error) error {
	for {
		err := check()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (%v)", what, err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Healthy reports whether every live node says cluster_state:ok, every one agrees with the
// others on which master serves each slot, and every live replica is in sync with its master.
func (c *Cluster) Healthy(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.healthy(ctx)
}

func (c *Cluster) healthy(ctx context.Context) error {
	want := c.slotMap()
	for _, n := range c.nodes {
		if n.srv.PID() == 0 {
			continue
		}
		info, err := n.client.ClusterInfo(ctx).Result()
		if err != nil {
			return fmt.Errorf("%s: CLUSTER INFO: %w", n.srv.Addr(), err)
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Errorf("%s: cluster_state is not ok", n.srv.Addr())
		}
		slots, err := n.client.ClusterSlots(ctx).Result()
		if err != nil {
			return fmt.Errorf("%s: CLUSTER SLOTS: %w", n.srv.Addr(), err)
		}
		if got := canonicalSlots(slots); got != want {
			return fmt.Errorf("%s sees the slots as %s, want %s", n.srv.Addr(), got, want)
		}
		if c.masters[n.shard] == n {
			continue
		}
		repl, err := n.client.Info(ctx, "replication").Result()
		if err != nil {
			return fmt.Errorf("%s: INFO replication: %w", n.srv.Addr(), err)
		}
		if !strings.Contains(repl, "master_link_status:up") || !strings.Contains(repl, "master_port:"+strconv.Itoa(c.masters[n.shard].srv.port)+"\r") {
			return fmt.Errorf("replica %s is not in sync with %s", n.srv.Addr(), c.masters[n.shard].srv.Addr())
		}
	}
	return nil
}

// waitHealthy waits until healthy.
func (c *Cluster) waitHealthy(ctx context.Context) error {
	return poll(ctx, "the cluster to be ok and agree on its slots", func() error { return c.healthy(ctx) })
}

// slotMap is the slot ranges, their masters' addresses and live replicas as we assigned them, in the form
// canonicalSlots gives.
func (c *Cluster) slotMap() string {
	var b strings.Builder
	for lo := 0; lo < clusterSlots; {
		hi := lo
		for hi+1 < clusterSlots && c.owner[hi+1] == c.owner[lo] {
			hi++
		}
		m := c.masters[c.owner[lo]]
		replicas := 0
		for _, n := range c.nodes {
			if n.shard == m.shard && n != m {
				replicas++
			}
		}
		fmt.Fprintf(&b, "%d-%d:%s+%d ", lo, hi, m.srv.Addr(), replicas)
		lo = hi + 1
	}
	return strings.TrimSpace(b.String())
}

// canonicalSlots writes CLUSTER SLOTS as sorted, merged ranges with their masters and how
// many replicas each lists (a replica shows there once gossip made it one of its master's).
func canonicalSlots(slots []redis.ClusterSlot) string {
	slices.SortFunc(slots, func(a, b redis.ClusterSlot) int { return a.Start - b.Start })
	var b strings.Builder
	for i := 0; i < len(slots); {
		lo, hi, addr, replicas := slots[i].Start, slots[i].End, "", 0
		if len(slots[i].Nodes) > 0 {
			addr, replicas = slots[i].Nodes[0].Addr, len(slots[i].Nodes)-1
		}
		for i+1 < len(slots) && slots[i+1].Start == hi+1 && len(slots[i+1].Nodes) > 0 && slots[i+1].Nodes[0].Addr == addr {
			i++
			hi = slots[i].End
		}
		fmt.Fprintf(&b, "%d-%d:%s+%d ", lo, hi, addr, replicas)
		i++
	}
	return strings.TrimSpace(b.String())
}

// Addrs are every current master's host:port: the seeds a cluster client starts from.
func (c *Cluster) Addrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	addrs := make([]string, len(c.masters))
	for i, m := range c.masters {
		addrs[i] = m.srv.Addr()
	}
	return addrs
}

// NodeAddrs are every node's host:port, replicas and killed nodes included.
func (c *Cluster) NodeAddrs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.srv.Addr()
	}
	return addrs
}

// Password is the password of every node.
func (c *Cluster) Password() string { return c.password }

// Version is the nodes' redis_version.
func (c *Cluster) Version() string { return c.nodes[0].srv.Version() }

// Masters and Replicas are the cluster's shape: masters, and replicas per master.
func (c *Cluster) Masters() int  { return c.cfg.Masters }
func (c *Cluster) Replicas() int { return c.cfg.Replicas }

// URL is redis://:password@host1:port1,host2:port2,... with every master as a seed (the form
// --redis-url takes for a cluster); never print it (database.RedactURL).
func (c *Cluster) URL() string {
	u := url.URL{Scheme: "redis", User: url.UserPassword("", c.password), Host: strings.Join(c.Addrs(), ",")}
	return u.String()
}

// ClusterOptions are the options of a cluster client of this cluster: every master as a seed,
// the password, no command retries (MaxRetries -1, and NoReplay on every node's client: a
// command whose reply was lost is never sent again) while MOVED, ASK and errors that say the
// command did not run (TRYAGAIN, CLUSTERDOWN, LOADING) are still followed.
func (c *Cluster) ClusterOptions() *redis.ClusterOptions {
	return NoReplay(&redis.ClusterOptions{Addrs: c.Addrs(), Password: c.password, MaxRetries: -1})
}

// Stop stops every node and removes their directories. It is idempotent.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	var err error
	for _, n := range c.nodes {
		_ = n.client.Close()
		err = errors.Join(err, n.srv.Stop())
	}
	c.stopped = true
	liveClusters.Remove(c)
	return err
}

// FailoverReport says what Failover did.
type FailoverReport struct {
	Shard    int
	Killed   string        // the master SIGKILLed
	Promoted string        // the replica that took over its slots
	Down     time.Duration // from the kill until every live node was ok and agreed again
	Rejoined time.Duration // from then until the killed node was back, as a replica
}

// Failover SIGKILLs the current master of shard master, waits until its replica is promoted
// and the cluster is ok, then starts the killed node again (same port and directory): it
// rejoins as a replica of the new master, so the cluster can fail over again.
func (c *Cluster) Failover(ctx context.Context, master int) error {
	_, err := c.FailoverReport(ctx, master)
	return err
}

// FailoverReport is Failover, saying what happened.
func (c *Cluster) FailoverReport(ctx context.Context, master int) (FailoverReport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := FailoverReport{Shard: master}
	if c.stopped {
		return r, errors.New("failover: the cluster was stopped")
	}
	if master < 0 || master >= len(c.masters) {
		return r, fmt.Errorf("failover: no master %d (the cluster has %d)", master, len(c.masters))
	}
	if len(c.masters) < 3 {
		return r, fmt.Errorf("failover: %d masters cannot elect a replica (a majority of masters votes; it takes 3)", len(c.masters))
	}
	old := c.masters[master]
	var replicas []*clusterNode
	for _, n := range c.nodes {
		if n.shard == master && n != old {
			replicas = append(replicas, n)
		}
	}
	if len(replicas) == 0 {
		return r, errors.New("failover: the master has no replica (ClusterConfig.Replicas)")
	}
	r.Killed = old.srv.Addr()
	t0 := time.Now()
	if err := old.srv.killNow(); err != nil {
		return r, fmt.Errorf("failover: %w", err)
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.agreeTimeout()+c.cfg.NodeTimeout)
	defer cancel()
	var promoted *clusterNode
	err := poll(wctx, "a replica of "+r.Killed+" to be promoted", func() error {
		for _, n := range replicas {
			if role, err := n.client.Do(wctx, "role").Slice(); err == nil && len(role) > 0 && role[0] == "master" {
				promoted = n
				return nil
			}
		}
		return errors.New("no replica is master yet")
	})
	if err != nil {
		return r, fmt.Errorf("failover: %w", err)
	}
	c.masters[master], r.Promoted = promoted, promoted.srv.Addr()
	if err := c.waitHealthyExcept(wctx, old); err != nil {
		return r, fmt.Errorf("failover: %w", err)
	}
	r.Down = time.Since(t0)
	t1 := time.Now()
	if err := old.srv.restart(wctx); err != nil {
		return r, fmt.Errorf("failover: %w", err)
	}
	if err := c.waitHealthy(wctx); err != nil {
		return r, fmt.Errorf("failover: the killed master rejoining: %w", err)
	}
	r.Rejoined = time.Since(t1)
	return r, nil
}

// waitHealthyExcept waits until healthy with the dead node left out.
func (c *Cluster) waitHealthyExcept(ctx context.Context, dead *clusterNode) error {
	i := slices.Index(c.nodes, dead)
	c.nodes = slices.Delete(c.nodes, i, i+1)
	defer func() { c.nodes = slices.Insert(c.nodes, i, dead) }()
	return c.waitHealthy(ctx)
}

// ReshardReport says what Reshard did.
type ReshardReport struct {
	From, To string // the masters' addresses
	Slots    int    // slots moved
	First    int    // the lowest slot moved
	Last     int    // the highest
	Keys     int    // keys moved with them
	Took     time.Duration
}

// Reshard moves slots of master from (its highest ones) to master to, live, with their keys:
// for each slot, CLUSTER SETSLOT IMPORTING on the target and MIGRATING on the source, MIGRATE
// of its keys in batches, then CLUSTER SETSLOT NODE on the target, the source and every other
// master. Clients are redirected meanwhile (ASK while a slot moves, MOVED after). It returns
// once every node agrees on the new slot map.
func (c *Cluster) Reshard(ctx context.Context, from, to int, slots int) error {
	_, err := c.ReshardReport(ctx, from, to, slots)
	return err
}

// ReshardReport is Reshard, saying what happened.
func (c *Cluster) ReshardReport(ctx context.Context, from, to int, slots int) (ReshardReport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkReshard(from, to); err != nil {
		return ReshardReport{}, err
	}
	var owned []int
	for s := clusterSlots - 1; s >= 0 && len(owned) < slots; s-- {
		if c.owner[s] == from {
			owned = append(owned, s)
		}
	}
	if slots < 1 || len(owned) < slots {
		return ReshardReport{}, fmt.Errorf("reshard: %d slots asked, master %d has %d", slots, from, len(owned))
	}
	return c.reshard(ctx, from, to, owned)
}

// ReshardKeyed moves every slot of master from that holds a key to master to, as Reshard
// moves slots: the slots a workload is using.
func (c *Cluster) ReshardKeyed(ctx context.Context, from, to int) (ReshardReport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkReshard(from, to); err != nil {
		return ReshardReport{}, err
	}
	src := c.masters[from]
	seen := map[int]bool{}
	var slots []int
	iter := src.client.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		s, err := src.client.ClusterKeySlot(ctx, iter.Val()).Result()
		if err != nil {
			return ReshardReport{}, fmt.Errorf("reshard: CLUSTER KEYSLOT: %w", err)
		}
		if !seen[int(s)] && c.owner[s] == from {
			seen[int(s)] = true
			slots = append(slots, int(s))
		}
	}
	if err := iter.Err(); err != nil {
		return ReshardReport{}, fmt.Errorf("reshard: SCAN: %w", err)
	}
	if len(slots) == 0 {
		return ReshardReport{}, fmt.Errorf("reshard: master %d holds no key", from)
	}
	slices.Sort(slots)
	slices.Reverse(slots)
	return c.reshard(ctx, from, to, slots)
}

func (c *Cluster) checkReshard(from, to int) error {
	if c.stopped {
		return errors.New("reshard: the cluster was stopped")
	}
	if from < 0 || from >= len(c.masters) || to < 0 || to >= len(c.masters) || from == to {
		return fmt.Errorf("reshard: from master %d to %d: want two different masters of %d", from, to, len(c.masters))
	}
	return nil
}

// reshard moves slots (highest first) from master from to master to.
func (c *Cluster) reshard(ctx context.Context, from, to int, slots []int) (ReshardReport, error) {
	var r ReshardReport
	src, dst := c.masters[from], c.masters[to]
	r.From, r.To, r.Last, r.First = src.srv.Addr(), dst.srv.Addr(), slices.Max(slots), slices.Min(slots)
	t0 := time.Now()
	ctx = context.WithoutCancel(ctx) // a slot left half-moved would leave the cluster broken
	for _, s := range slots {
		n, err := c.moveSlot(ctx, s, src, dst)
		r.Keys += n
		if err != nil {
			return r, fmt.Errorf("reshard: slot %d from %s to %s: %w", s, r.From, r.To, err)
		}
		c.owner[s] = to
		r.Slots++
	}
	wctx, cancel := context.WithTimeout(ctx, c.agreeTimeout())
	defer cancel()
	if err := c.waitHealthy(wctx); err != nil {
		return r, fmt.Errorf("reshard: %w", err)
	}
	r.Took = time.Since(t0)
	return r, nil
}

// BusiestMaster is the index of the master holding the most keys.
func (c *Cluster) BusiestMaster(ctx context.Context) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	best, most := 0, int64(-1)
	for i, m := range c.masters {
		n, err := m.client.DBSize(ctx).Result()
		if err != nil {
			return 0, fmt.Errorf("%s: DBSIZE: %w", m.srv.Addr(), err)
		}
		if n > most {
			best, most = i, n
		}
	}
	return best, nil
}

// Master is a control client of master i's node (no retries, not redirected; do not close
// it): for what a test or a fault reads or holds on that one node.
func (c *Cluster) Master(i int) *redis.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.masters[i].client
}

// ReplicaLag waits up to within until every live replica of master i has replicated all
// the master has (its slave_repl_offset = the master's master_repl_offset), and returns how
// many bytes the furthest one still lags.
func (c *Cluster) ReplicaLag(ctx context.Context, i int, within time.Duration) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.masters[i]
	deadline := time.Now().Add(within)
	for {
		mo, err := replOffset(ctx, m.client, "master_repl_offset")
		if err != nil {
			return 0, err
		}
		var lag int64
		for _, n := range c.nodes {
			if n.shard != i || n == m || n.srv.PID() == 0 {
				continue
			}
			ro, err := replOffset(ctx, n.client, "slave_repl_offset")
			if err != nil {
				return 0, err
			}
			lag = max(lag, mo-ro)
		}
		if lag <= 0 || time.Now().After(deadline) {
			return max(lag, 0), nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func replOffset(ctx context.Context, c *redis.Client, field string) (int64, error) {
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO replication has no %s", field)
}

// moveSlot moves one slot and its keys from src to dst, returning how many keys moved.
func (c *Cluster) moveSlot(ctx context.Context, slot int, src, dst *clusterNode) (int, error) {
	if err := dst.client.Do(ctx, "cluster", "setslot", slot, "importing", src.id).Err(); err != nil {
		return 0, fmt.Errorf("SETSLOT IMPORTING: %w", err)
	}
	if err := src.client.Do(ctx, "cluster", "setslot", slot, "migrating", dst.id).Err(); err != nil {
		return 0, fmt.Errorf("SETSLOT MIGRATING: %w", err)
	}
	moved := 0
	for {
		keys, err := src.client.ClusterGetKeysInSlot(ctx, slot, 100).Result()
		if err != nil {
			return moved, fmt.Errorf("GETKEYSINSLOT: %w", err)
		}
		if len(keys) == 0 {
			break
		}
		args := []any{"migrate", dst.srv.host(), dst.srv.port, "", 0, 10000, "auth", c.password, "keys"}
		for _, k := range keys {
			args = append(args, k)
		}
		if err := src.client.Do(ctx, args...).Err(); err != nil {
			return moved, fmt.Errorf("MIGRATE: %w", err)
		}
		moved += len(keys)
	}
	for _, n := range []*clusterNode{dst, src} {
		if err := n.client.Do(ctx, "cluster", "setslot", slot, "node", dst.id).Err(); err != nil {
			return moved, fmt.Errorf("SETSLOT NODE on %s: %w", n.srv.Addr(), err)
		}
	}
	for _, m := range c.masters {
		if m != src && m != dst {
			// The others learn it through the cluster bus anyway; telling them is quicker.
			_ = m.client.Do(ctx, "cluster", "setslot", slot, "node", dst.id).Err()
		}
	}
	return moved, nil
}

// StopAll stops every server and cluster this process started and has not stopped yet.
func stopAll() error { return errors.Join(liveClusters.StopAll(), live.StopAll()) }
