package queue

// Metrics is a snapshot of a backend's counters; the package doc defines every field and the
// invariant that ties them together (Accounted is its right-hand side). The JSON names are the
// report's: results.QueueMetrics converts from Metrics field for field.
type Metrics struct {
	Capacity             int64 `json:"capacity"`
	Depth                int64 `json:"depth"`
	PendingDepth         int64 `json:"pending_depth"`
	MaxDepth             int64 `json:"max_depth"`
	EnqueuedTotal        int64 `json:"enqueued_total"`
	FlushedTotal         int64 `json:"flushed_total"`
	FlushBatchesTotal    int64 `json:"flush_batches_total"`
	FlushSQLOpsTotal     int64 `json:"flush_sql_ops_total"`
	FlushSQLRecordsTotal int64 `json:"flush_sql_records_total"`
	CompactedTotal       int64 `json:"compacted_total"`
	DroppedTotal         int64 `json:"dropped_total"`
	FlushFailedTotal     int64 `json:"flush_failed_total"`
	RetriesTotal         int64 `json:"retries_total"`
	SyncFallbackTotal    int64 `json:"sync_fallback_total"`
	RejectedTotal        int64 `json:"rejected_total"`
	AbandonedTotal       int64 `json:"abandoned_total"`
}

// Accounted is the right-hand side of the invariant: records that reached a final outcome.
// Once the queue is closed it equals EnqueuedTotal.
func (m Metrics) Accounted() int64 {
	return m.FlushedTotal + m.SyncFallbackTotal + m.DroppedTotal + m.RejectedTotal + m.AbandonedTotal
}
