package database

// Created reports whether this process created the run's schema; false when it joined an
// existing one (ReuseSchema), as the second and later processes of a split run do.
func (t *Target) Created() bool { return t.createdBy }
