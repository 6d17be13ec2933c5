package redisserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hotspotkit/hotspotkit/internal/testhelp/serverproctest"
	"github.com/hotspotkit/hotspotkit/testkit/servers/serverproc"
)

func startClusterForTest(t *testing.T, cfg ClusterConfig) *Cluster {
	t.Helper()
	return serverproctest.Started(t, 60*time.Second, func(ctx context.Context) (*Cluster, error) { return StartCluster(ctx, cfg) })
}

// nodeState is what a test checks is gone after Stop.
func nodeState(c *Cluster) (pids []int, dirs []string) {
	for _, n := range c.nodes {
		pids, dirs = append(pids, n.srv.PID()), append(dirs, n.srv.Dir())
	}
	return pids, dirs
}

func checkGone(t *testing.T, pids []int, dirs []string) {
	t.Helper()
	for _, pid := range pids {
		if serverproc.Alive(pid) {
			t.Errorf("redis-server %d alive after Stop", pid)
		}
	}
	for _, d := range dirs {
		if serverproctest.Exists(d) {
			t.Errorf("%s left after Stop", d)
		}
	}
}

// dbsizes is each master's number of keys.
func dbsizes(t *testing.T, c *Cluster) []int64 {
	t.Helper()
	var sizes []int64
	for _, addr := range c.Addrs() {
		cl := redis.NewClient(&redis.Options{Addr: addr, Password: c.Password()})
		n, err := cl.DBSize(context.Background()).Result()
		cl.Close()
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// TestClusterKeysOnEveryMasterReshardUnderLoadAndStop starts 3 masters, puts keys on each,
// moves 200 slots from master 0 to master 1 while a client keeps writing and reading through
// the redirects, and checks that every key and a stream's group survived and that Stop leaves
// nothing.
func TestClusterKeysOnEveryMasterReshardUnderLoadAndStop(t *testing.T) {
	needBinary(t)
	c := startClusterForTest(t, ClusterConfig{})
	ctx := context.Background()
	if len(c.Addrs()) != 3 || !strings.HasPrefix(c.URL(), "redis://:"+c.Password()+"@127.0.0.1:") || strings.Count(c.URL(), ",") != 2 {
		t.Fatalf("Addrs %v, URL %s", c.Addrs(), c.URL())
	}
	for _, pid := range func() []int { p, _ := nodeState(c); return p }() {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if strings.Contains(string(cmdline), c.Password()) {
			t.Errorf("the password is on redis-server %d's command line", pid)
		}
	}
	cl := redis.NewClusterClient(c.ClusterOptions())
	defer cl.Close()
	const keys = 300
	for i := range keys {
		if err := cl.Set(ctx, "k"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i, n := range dbsizes(t, c) {
		if n == 0 {
			t.Errorf("master %d holds no key of %d", i, keys)
		}
	}
	// A stream with a group and a pending entry in one of the slots that move (the highest of
	// master 0's, below 5461).
	stream := ""
	for i := 0; stream == ""; i++ {
		k := "s" + strconv.Itoa(i)
		if s, _ := cl.ClusterKeySlot(ctx, k).Result(); s > 5461-200 && s <= 5460 {
			stream = k
		}
	}
	if err := cl.XGroupCreateMkStream(ctx, stream, "g", "0").Err(); err != nil {
		t.Fatal(err)
	}
	cl.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"v", 1}})
	if err := cl.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{stream, ">"}, Count: 1}).Err(); err != nil {
		t.Fatal(err)
	}

	var wrote atomic.Int64
	var loadErr error
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			k := "load" + strconv.Itoa(i)
			if err := cl.Set(ctx, k, i, 0).Err(); err != nil {
				loadErr = fmt.Errorf("SET %s during the reshard: %w", k, err)
				return
			}
			if v, err := cl.Get(ctx, "k"+strconv.Itoa(i%keys)).Int(); err != nil || v != i%keys {
				loadErr = fmt.Errorf("GET k%d during the reshard = %d, %v", i%keys, v, err)
				return
			}
			wrote.Add(1)
		}
	})
	src := redis.NewClient(&redis.Options{Addr: c.Addrs()[0], Password: c.Password()})
	defer src.Close()
	r, err := c.ReshardReport(ctx, 0, 1, 200)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("Reshard: %v", err)
	}
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	if r.Slots != 200 || r.First != 5461-200 || r.Last != 5460 || r.Keys == 0 {
		t.Errorf("reshard report %+v: want slots 5261–5460 moved with their keys", r)
	}
	for s := r.First; s <= r.Last; s++ {
		if n, err := src.ClusterCountKeysInSlot(ctx, s).Result(); err != nil || n != 0 {
			t.Fatalf("slot %d still holds %d keys on its old master (%v)", s, n, err)
		}
	}
	for i := range keys {
		if v, err := cl.Get(ctx, "k"+strconv.Itoa(i)).Int(); err != nil || v != i {
			t.Fatalf("k%d after the reshard = %d, %v", i, v, err)
		}
	}
	for i := range int(wrote.Load()) {
		if err := cl.Get(ctx, "load"+strconv.Itoa(i)).Err(); err != nil {
			t.Fatalf("load%d, written during the reshard: %v", i, err)
		}
	}
	pending, err := cl.XPending(ctx, stream, "g").Result()
	if err != nil || pending.Count != 1 {
		t.Errorf("the stream's group after the move: %+v, %v; want its one pending entry", pending, err)
	}
	if err := c.Healthy(ctx); err != nil {
		t.Error(err)
	}
	t.Logf("reshard: %+v, %d writes through it", r, wrote.Load())

	pids, dirs := nodeState(c)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	checkGone(t, pids, dirs)
	if err := c.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestClusterFailoverPromotesTheReplica(t *testing.T) {
	needBinary(t)
	c := startClusterForTest(t, ClusterConfig{Replicas: 1})
	ctx := context.Background()
	if n := len(c.NodeAddrs()); n != 6 {
		t.Fatalf("%d nodes, want 6", n)
	}
	cl := redis.NewClusterClient(c.ClusterOptions())
	defer cl.Close()
	for i := range 100 {
		if err := cl.Set(ctx, "k"+strconv.Itoa(i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	old := c.Addrs()[0]
	m := redis.NewClient(&redis.Options{Addr: old, Password: c.Password()})
	if n, err := m.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT for the replica: %d, %v", n, err)
	}
	m.Close()
	r, err := c.FailoverReport(ctx, 0)
	if err != nil {
		t.Fatalf("Failover: %v", err)
	}
	if r.Killed != old || r.Promoted == old || c.Addrs()[0] != r.Promoted || r.Down <= 0 {
		t.Errorf("failover report %+v, masters now %v", r, c.Addrs())
	}
	for i := range 100 {
		if v, err := cl.Get(ctx, "k"+strconv.Itoa(i)).Int(); err != nil || v != i {
			t.Fatalf("k%d after the failover = %d, %v", i, v, err)
		}
	}
	if err := c.Healthy(ctx); err != nil {
		t.Errorf("after the killed master rejoined: %v", err)
	}
	t.Logf("failover: %+v", r)
	if _, err := (&Cluster{cfg: ClusterConfig{Masters: 3}}).FailoverReport(ctx, 5); err == nil {
		t.Error("a failover of a master that does not exist did not fail")
	}
}

func TestClusterFailoverNeedsAReplica(t *testing.T) {
	c := &Cluster{masters: make([]*clusterNode, 3)}
	c.masters[0] = &clusterNode{}
	c.nodes = []*clusterNode{c.masters[0]}
	if _, err := c.FailoverReport(context.Background(), 0); err == nil || !strings.Contains(err.Error(), "no replica") {
		t.Errorf("failover without a replica: %v", err)
	}
}

func TestStopAllStopsClustersAndWatchdogCleansUp(t *testing.T) {
	needBinary(t)
	serverproctest.WatchdogCleansUp(t, "redis-server (cluster node)", 15*time.Second, func() (int, string, error) {
		c, err := StartCluster(context.Background(), ClusterConfig{Masters: 1})
		if err != nil {
			return 0, "", err
		}
		return c.nodes[0].srv.PID(), c.nodes[0].srv.Dir(), nil
	})
	c := startClusterForTest(t, ClusterConfig{Masters: 1})
	pids, dirs := nodeState(c)
	if err := StopAll(); err != nil {
		t.Fatal(err)
	}
	checkGone(t, pids, dirs)
}

func TestStartClusterErrorsLeaveNothing(t *testing.T) {
	if _, err := StartCluster(context.Background(), ClusterConfig{Binary: "/nonexistent/redis-server"}); err == nil || !strings.Contains(err.Error(), "/nonexistent/redis-server") {
		t.Errorf("want an error naming the binary, got %v", err)
	}
	needBinary(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := StartCluster(ctx, ClusterConfig{TempDir: dir}); err == nil {
		t.Fatal("a cluster started on a cancelled context")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d directories left after a failed start", len(entries))
	}
}

func TestOutcomeUnknownIsNotRetried(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("EOF"), true},
		{redis.ErrPoolTimeout, false},
		{context.DeadlineExceeded, true},
	} {
		if got := mayHaveRun(c.err); got != c.want {
			t.Errorf("mayHaveRun(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	e := &OutcomeUnknownError{err: fmt.Errorf("read: %w", context.DeadlineExceeded)}
	if !errors.Is(e, context.DeadlineExceeded) || errors.Is(e, os.ErrDeadlineExceeded) {
		t.Error("OutcomeUnknownError should match the context error it wraps, and nothing else")
	}
}
