package pgbouncer

import "context"

// Reconnect runs RECONNECT db ("": every database): each server connection of the database
// is closed once it is released, and the pooler opens new ones as clients need them.
func (c *Console) Reconnect(ctx context.Context, db string) error {
	return c.command(ctx, "RECONNECT", db)
}
