package redisq

import (
	"context"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"
)

// TestLostAckReplyIsReplayed: an acknowledging call retried with its token (its first reply
// was lost to a client timeout) gets the first call's reply, not zeros; a new token gets what
// the stream says now.
func TestLostAckReplyIsReplayed(t *testing.T) {
	backends(t, func(t *testing.T, rdb *redis.Client) {
		ctx := context.Background()
		const stream, group = "replay", "g"
		ks := []string{stream, stream + ":stats", stream + ":replies"}
		t.Cleanup(func() { rdb.Del(context.Background(), ks...) })
		if err := rdb.XGroupCreateMkStream(ctx, stream, group, "0").Err(); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"d", "x"}}).Err(); err != nil {
				t.Fatal(err)
			}
		}
		read, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: "c", Streams: []string{stream, ">"}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		args := []any{group}
		for _, m := range read[0].Messages {
			args = append(args, m.ID, kindApplied)
		}
		call := func(token string) []int64 {
			t.Helper()
			res, err := ackScript.Run(ctx, rdb, ks, append(slices.Clone(args), "c", token)...).Int64Slice()
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		if got := call("q-1"); !slices.Equal(got, []int64{1, 1, 1}) {
			t.Fatalf("first call: %v, want 1 1 1", got)
		}
		if got := call("q-1"); !slices.Equal(got, []int64{1, 1, 1}) {
			t.Errorf("the same call again (its reply lost): %v, want the kept 1 1 1", got)
		}
		if got := call("q-2"); !slices.Equal(got, []int64{0, 0, 0}) {
			t.Errorf("a new call on acknowledged entries: %v, want 0 0 0", got)
		}
		if n, _ := rdb.HGet(ctx, stream+":stats", "acked").Int64(); n != 3 {
			t.Errorf("stats acked %d, want 3 (counted once)", n)
		}
	})
}
